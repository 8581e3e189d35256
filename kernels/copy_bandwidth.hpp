#pragma once
// Device-to-device copy with 16-byte vector accesses: the ceiling that memory-bound kernels
// (permute, casts, router) are measured against, as nccl-tests and CUTLASS measure theirs.
#include <cstddef>

#include <cuda_runtime_api.h>

namespace moesim::kernels {

/// Copies `bytes` from `src` to `dst` (device pointers) on `stream`: 16-byte vectors when both
/// are 16-byte aligned, the remaining bytes one by one.
void copy_device(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

struct CopyMeasurement {
  double seconds_median = 0;      ///< per copy, CUDA-event timed
  double spread_seconds = 0;      ///< p90 - p10 of the samples
  int repeats = 0;
  double bytes_per_second = 0;    ///< (read + written) bytes / time, as hardware.md quotes it
};

/// Copies `bytes` seeded random bytes from `offset` bytes into a buffer (an offset not a multiple of
/// 16 takes the byte path) and throws CudaError unless every destination byte is right.
void check_copy(std::size_t bytes, std::size_t offset, cudaStream_t stream);

/// Checks copy_device on random bytes, then times `repeats` samples after
/// `warmup` untimed copies (our kernel, or cudaMemcpyAsync when `use_memcpy`).
[[nodiscard]] CopyMeasurement measure_copy_bandwidth(std::size_t bytes, int warmup, int repeats, bool use_memcpy = false);

}  // namespace moesim::kernels
