#include "kernels/random_fill.hpp"

#include "kernels/cuda_check.hpp"
#include "kernels/launch_config.hpp"
#include "kernels/numeric.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 256;

template <class Gen>
__global__ void __launch_bounds__(kThreads) fill_kernel(std::size_t n, Gen gen) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) gen(i);
}

struct Bf16Gen {
  std::uint16_t* p;
  std::uint64_t seed;
  float amplitude;
  __device__ void operator()(std::size_t i) const { p[i] = float_to_bf16(random_uniform(seed, i) * amplitude); }
};
struct F32Gen {
  float* p;
  std::uint64_t seed;
  float amplitude, offset;
  __device__ void operator()(std::size_t i) const { p[i] = random_uniform(seed, i) * amplitude + offset; }
};
struct E4m3Gen {
  std::uint8_t* p;
  std::uint64_t seed;
  float amplitude;
  __device__ void operator()(std::size_t i) const { p[i] = random_e4m3(seed, i, amplitude); }
};
struct E2m1Gen {  // one byte (two elements) per index
  std::uint8_t* p;
  std::uint64_t seed;
  __device__ void operator()(std::size_t b) const {
    p[b] = static_cast<std::uint8_t>(random_e2m1(seed, 2 * b) | (random_e2m1(seed, 2 * b + 1) << 4));
  }
};

template <class Gen>
void launch_fill(std::size_t n, Gen gen, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned grid = resident_grid(fill_kernel<Gen>, kThreads, (n + kThreads - 1) / kThreads);
  fill_kernel<Gen><<<grid, kThreads, 0, stream>>>(n, gen);
  MOESIM_LAUNCH_CHECK("fill_kernel");
}

}  // namespace

void fill_random_bf16(std::uint16_t* p, std::size_t n, std::uint64_t seed, float amplitude, cudaStream_t stream) {
  launch_fill(n, Bf16Gen{p, seed, amplitude}, stream);
}
void fill_random_f32(float* p, std::size_t n, std::uint64_t seed, float amplitude, float offset, cudaStream_t stream) {
  launch_fill(n, F32Gen{p, seed, amplitude, offset}, stream);
}
void fill_random_e4m3(std::uint8_t* p, std::size_t n, std::uint64_t seed, float amplitude, cudaStream_t stream) {
  launch_fill(n, E4m3Gen{p, seed, amplitude}, stream);
}
void fill_random_e2m1(std::uint8_t* packed, std::size_t elements, std::uint64_t seed, cudaStream_t stream) {
  launch_fill(elements / 2, E2m1Gen{packed, seed}, stream);
}

}  // namespace moesim::kernels
