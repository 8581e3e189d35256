#include "kernels/cast_fp8.hpp"

#include <cuda_fp8.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/launch_config.hpp"
#include "kernels/numeric.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

// |x| of non-NaN BF16 values orders like the 15-bit pattern without the sign, so the amax is an
// unsigned max over pairs of halves (one __vmaxu2 per 32-bit word), and its bits are the result's.
__device__ __forceinline__ unsigned abs_max_pairs(unsigned acc, unsigned word) { return __vmaxu2(acc, word & 0x7fff7fffu); }

__device__ __forceinline__ unsigned pairs_to_amax_bits(unsigned pairs) {
  const unsigned m = max(pairs & 0xffffu, pairs >> 16);
  return m << 16;  // the BF16 pattern as FP32 bits: non-negative floats order like unsigned ints
}

// Block-wide max of `bits`, then one atomicMax per block into the FP32 bits of *amax.
__device__ __forceinline__ void block_amax(unsigned bits, float* amax) {
  __shared__ unsigned warp_max[kThreads / 32];
  bits = __reduce_max_sync(kFull, bits);
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = bits;
  __syncthreads();
  if (threadIdx.x < 32) {
    bits = threadIdx.x < kThreads / 32 ? warp_max[threadIdx.x] : 0u;
    bits = __reduce_max_sync(kFull, bits);
    if (threadIdx.x == 0 && bits != 0) atomicMax(reinterpret_cast<unsigned*>(amax), bits);
  }
}

__global__ void __launch_bounds__(kThreads) amax_kernel(const uint4* __restrict__ x, std::size_t vectors,
                                                        const std::uint16_t* __restrict__ tail, int tail_n, float* amax) {
  unsigned pairs = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride) {
    const uint4 v = __ldg(x + i);
    pairs = abs_max_pairs(abs_max_pairs(pairs, v.x), v.y);
    pairs = abs_max_pairs(abs_max_pairs(pairs, v.z), v.w);
  }
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail_n) pairs = abs_max_pairs(pairs, tail[threadIdx.x]);
  block_amax(pairs_to_amax_bits(pairs), amax);
}

__device__ __forceinline__ float scale_from_amax(float amax) {
  return (amax > 0.0f && isfinite(amax)) ? kE4m3Max / amax : 1.0f;  // IEEE division: bit-exact with the host
}

__device__ __forceinline__ unsigned cvt4(unsigned w0, unsigned w1, float s) {
  // Four BF16 -> four E4M3 with hardware round-to-nearest-even and saturation (sm_89+).
  const __nv_fp8x2_storage_t a = __nv_cvt_float2_to_fp8x2(make_float2(__uint_as_float(w0 << 16) * s, __uint_as_float(w0 & 0xffff0000u) * s), __NV_SATFINITE, __NV_E4M3);
  const __nv_fp8x2_storage_t b = __nv_cvt_float2_to_fp8x2(make_float2(__uint_as_float(w1 << 16) * s, __uint_as_float(w1 & 0xffff0000u) * s), __NV_SATFINITE, __NV_E4M3);
  return static_cast<unsigned>(a) | (static_cast<unsigned>(b) << 16);
}

// Each thread turns 32 bytes of BF16 (two 16-byte loads) into one 16-byte FP8 store. With
// kComputeAmax it also reduces the input's amax (delayed scaling's one pass); otherwise the scale
// comes from an amax the previous kernel reduced (current scaling).
template <bool kDelayed>
__global__ void __launch_bounds__(kThreads) cast_kernel(const uint4* __restrict__ x, std::size_t pairs_of_vectors,
                                                        const std::uint16_t* __restrict__ tail, int tail_n,
                                                        const float* scale_in, const float* amax_in, uint4* __restrict__ out,
                                                        std::uint8_t* __restrict__ out_tail, float* amax_out,
                                                        float* scale_out, float* scale_inv_out) {
  const float s = kDelayed ? *scale_in : scale_from_amax(*amax_in);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    if (!kDelayed) *scale_out = s;
    *scale_inv_out = 1.0f / s;
  }
  unsigned pairs = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < pairs_of_vectors; i += stride) {
    const uint4 a = __ldcs(x + 2 * i);
    const uint4 b = __ldcs(x + 2 * i + 1);
    if (kDelayed) {
      pairs = abs_max_pairs(abs_max_pairs(abs_max_pairs(abs_max_pairs(pairs, a.x), a.y), a.z), a.w);
      pairs = abs_max_pairs(abs_max_pairs(abs_max_pairs(abs_max_pairs(pairs, b.x), b.y), b.z), b.w);
    }
    out[i] = make_uint4(cvt4(a.x, a.y, s), cvt4(a.z, a.w, s), cvt4(b.x, b.y, s), cvt4(b.z, b.w, s));
  }
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail_n) {
    const std::uint16_t v = tail[threadIdx.x];
    if (kDelayed) pairs = abs_max_pairs(pairs, v);
    out_tail[threadIdx.x] = static_cast<std::uint8_t>(
        __nv_cvt_float_to_fp8(__uint_as_float(static_cast<unsigned>(v) << 16) * s, __NV_SATFINITE, __NV_E4M3));
  }
  if (kDelayed) block_amax(pairs_to_amax_bits(pairs), amax_out);
}

constexpr std::size_t kElementsPerThread = 16;  // two uint4 of BF16 in, one uint4 of FP8 out

template <bool kDelayed>
void launch_cast(const std::uint16_t* x, std::size_t n, const float* scale_in, const float* amax_in, std::uint8_t* out,
                 float* amax_out, float* scale_out, float* scale_inv_out, cudaStream_t stream) {
  const std::size_t body = n / kElementsPerThread;
  const auto tail_n = static_cast<int>(n - body * kElementsPerThread);
  auto* kernel = cast_kernel<kDelayed>;
  const unsigned grid = resident_grid(kernel, kThreads, (body + kThreads - 1) / kThreads);
  kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(x), body, x + body * kElementsPerThread, tail_n,
                                        scale_in, amax_in, reinterpret_cast<uint4*>(out), out + body * kElementsPerThread,
                                        amax_out, scale_out, scale_inv_out);
  MOESIM_LAUNCH_CHECK("cast_kernel");
}

void require_aligned(const void* a, const void* b, const char* what) {
  if ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) % 16 != 0) {
    throw std::invalid_argument(std::string(what) + ": input and output must be 16-byte aligned");
  }
}

}  // namespace

void amax_bf16(const std::uint16_t* x, std::size_t n, float* amax, cudaStream_t stream) {
  require_aligned(x, x, "amax_bf16");
  MOESIM_CUDA_CHECK(cudaMemsetAsync(amax, 0, sizeof(float), stream));
  const std::size_t vectors = n / 8;
  const unsigned grid = resident_grid(amax_kernel, kThreads, (vectors + kThreads - 1) / kThreads);
  amax_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(x), vectors, x + vectors * 8,
                                             static_cast<int>(n - vectors * 8), amax);
  MOESIM_LAUNCH_CHECK("amax_kernel");
}

void cast_fp8_delayed(const std::uint16_t* x, std::size_t n, const float* scale, std::uint8_t* out, float* amax_out,
                      float* scale_inv_out, cudaStream_t stream) {
  require_aligned(x, out, "cast_fp8_delayed");
  MOESIM_CUDA_CHECK(cudaMemsetAsync(amax_out, 0, sizeof(float), stream));
  launch_cast<true>(x, n, scale, nullptr, out, amax_out, nullptr, scale_inv_out, stream);
}

void cast_fp8_current(const std::uint16_t* x, std::size_t n, std::uint8_t* out, float* amax, float* scale, float* scale_inv,
                      cudaStream_t stream) {
  require_aligned(x, out, "cast_fp8_current");
  amax_bf16(x, n, amax, stream);
  launch_cast<false>(x, n, nullptr, amax, out, nullptr, scale, scale_inv, stream);
}

std::size_t cast_fp8_delayed_bytes(std::size_t n) { return 3 * n; }
std::size_t cast_fp8_current_bytes(std::size_t n) { return 5 * n; }

}  // namespace moesim::kernels
