#include "kernels/copy_bandwidth.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {
namespace {

__global__ void copy_vec16(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    dst[i] = src[i];
  }
}

__global__ void copy_bytes(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, std::size_t n) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

}  // namespace

void copy_device(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  const std::size_t vectors = bytes / sizeof(int4);
  const std::size_t tail = bytes - vectors * sizeof(int4);
  int device = 0, sms = 0;
  MOESIM_CUDA_CHECK(cudaGetDevice(&device));
  MOESIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (vectors > 0) {
    // A few waves of 256-thread blocks per SM keep enough loads in flight to saturate HBM.
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((vectors + 255) / 256, static_cast<std::size_t>(sms) * 8));
    copy_vec16<<<blocks, 256, 0, stream>>>(static_cast<const int4*>(src), static_cast<int4*>(dst), vectors);
    MOESIM_CUDA_CHECK(cudaGetLastError());
  }
  if (tail > 0) {
    const auto* s = static_cast<const unsigned char*>(src) + vectors * sizeof(int4);
    auto* d = static_cast<unsigned char*>(dst) + vectors * sizeof(int4);
    copy_bytes<<<1, 32, 0, stream>>>(s, d, tail);
    MOESIM_CUDA_CHECK(cudaGetLastError());
  }
}

CopyMeasurement measure_copy_bandwidth(std::size_t bytes, int warmup, int repeats) {
  void* src = nullptr;
  void* dst = nullptr;
  MOESIM_CUDA_CHECK(cudaMalloc(&src, bytes));
  MOESIM_CUDA_CHECK(cudaMalloc(&dst, bytes));
  // Verify before timing: random bytes copied must come back identical.
  std::vector<unsigned char> host(bytes), back(bytes);
  std::mt19937_64 gen(12345);
  for (auto& b : host) b = static_cast<unsigned char>(gen());
  MOESIM_CUDA_CHECK(cudaMemcpy(src, host.data(), bytes, cudaMemcpyHostToDevice));
  copy_device(src, dst, bytes, nullptr);
  MOESIM_CUDA_CHECK(cudaMemcpy(back.data(), dst, bytes, cudaMemcpyDeviceToHost));
  if (std::memcmp(host.data(), back.data(), bytes) != 0) throw CudaError("copy_device produced wrong bytes");

  cudaEvent_t start{}, stop{};
  MOESIM_CUDA_CHECK(cudaEventCreate(&start));
  MOESIM_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) copy_device(src, dst, bytes, nullptr);
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    MOESIM_CUDA_CHECK(cudaEventRecord(start));
    copy_device(src, dst, bytes, nullptr);
    MOESIM_CUDA_CHECK(cudaEventRecord(stop));
    MOESIM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    MOESIM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e-3);
  }
  std::sort(times.begin(), times.end());
  MOESIM_CUDA_CHECK(cudaEventDestroy(start));
  MOESIM_CUDA_CHECK(cudaEventDestroy(stop));
  MOESIM_CUDA_CHECK(cudaFree(src));
  MOESIM_CUDA_CHECK(cudaFree(dst));
  CopyMeasurement m;
  m.seconds_median = times.empty() ? 0 : times[times.size() / 2];
  m.bytes_per_second = m.seconds_median > 0 ? 2.0 * static_cast<double>(bytes) / m.seconds_median : 0;
  return m;
}

}  // namespace moesim::kernels
