#include "kernels/copy_bandwidth.hpp"

#include <cstdint>

#include "kernels/cuda_check.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/launch_config.hpp"
#include "kernels/numeric.hpp"
#include "kernels/stream.hpp"
#include "kernels/timing.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // independent 16-byte loads in flight per thread before the first store

__global__ void __launch_bounds__(kThreads) copy_vec16(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) __stcs(dst + i + u * stride, v[u]);
  }
  for (; i < n; i += stride) __stcs(dst + i, __ldcs(src + i));
}

__global__ void copy_bytes(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst, std::size_t n) {
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

__global__ void fill_random_bytes(unsigned char* p, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i] = static_cast<unsigned char>(random_bits(seed, i));
  }
}

// The copy's reference is its source: every destination byte is compared with the seeded value
// the source was filled with, on the device (a GiB check on the host would take seconds).
__global__ void count_mismatches(const unsigned char* p, std::size_t n, std::uint64_t seed, unsigned long long* bad) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    mine += p[i] != static_cast<unsigned char>(random_bits(seed, i));
  }
  if (mine != 0) atomicAdd(bad, mine);
}

}  // namespace

void copy_device(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  const bool aligned = (reinterpret_cast<std::uintptr_t>(src) | reinterpret_cast<std::uintptr_t>(dst)) % 16 == 0;
  const std::size_t vectors = aligned ? bytes / sizeof(uint4) : 0;
  const std::size_t tail = bytes - vectors * sizeof(uint4);
  if (vectors > 0) {
    const unsigned grid = resident_grid(copy_vec16, kThreads, (vectors + kThreads - 1) / kThreads);
    copy_vec16<<<grid, kThreads, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst), vectors);
    MOESIM_LAUNCH_CHECK("copy_vec16");
  }
  if (tail > 0) {
    const auto* s = static_cast<const unsigned char*>(src) + vectors * sizeof(uint4);
    auto* d = static_cast<unsigned char*>(dst) + vectors * sizeof(uint4);
    copy_bytes<<<1, 256, 0, stream>>>(s, d, tail);
    MOESIM_LAUNCH_CHECK("copy_bytes");
  }
}

void check_copy(std::size_t bytes, std::size_t offset, cudaStream_t stream) {
  constexpr std::uint64_t kSeed = 0xc0b1;
  DeviceBuffer<unsigned char> src(bytes + offset), dst(bytes + offset);
  DeviceBuffer<unsigned long long> bad(1);
  bad.fill_bytes(0);
  dst.fill_bytes(kPoisonByte);
  fill_random_bytes<<<resident_grid(fill_random_bytes, 256, (bytes + 255) / 256), 256, 0, stream>>>(src.data() + offset, bytes, kSeed);
  MOESIM_LAUNCH_CHECK("fill_random_bytes");
  copy_device(src.data() + offset, dst.data() + offset, bytes, stream);
  count_mismatches<<<resident_grid(count_mismatches, 256, (bytes + 255) / 256), 256, 0, stream>>>(dst.data() + offset, bytes, kSeed, bad.data());
  MOESIM_LAUNCH_CHECK("count_mismatches");
  const unsigned long long wrong = bad.download()[0];
  if (wrong != 0) {
    throw CudaError("copy_device: " + std::to_string(wrong) + " wrong bytes in a copy of " + std::to_string(bytes) +
                    " bytes at offset " + std::to_string(offset));
  }
}

CopyMeasurement measure_copy_bandwidth(std::size_t bytes, int warmup, int repeats, bool use_memcpy) {
  Stream stream;
  check_copy(bytes, 0, stream);
  DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  fill_random_bytes<<<resident_grid(fill_random_bytes, 256, (bytes + 255) / 256), 256, 0, stream>>>(src.data(), bytes, 7);
  MOESIM_LAUNCH_CHECK("fill_random_bytes");

  TimingPlan plan;
  plan.warmup = warmup;
  plan.repeats = repeats;
  const Summary s = time_launches(stream, [&] {
    if (use_memcpy) {
      MOESIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, stream));
    } else {
      copy_device(src.data(), dst.data(), bytes, stream);
    }
  }, plan);
  CopyMeasurement m;
  m.seconds_median = s.median * 1e-6;
  m.spread_seconds = s.spread() * 1e-6;
  m.repeats = s.repeats;
  m.bytes_per_second = m.seconds_median > 0 ? 2.0 * static_cast<double>(bytes) / m.seconds_median : 0;
  return m;
}

}  // namespace moesim::kernels
