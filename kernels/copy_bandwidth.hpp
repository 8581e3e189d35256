#pragma once
// Device-to-device copy with 16-byte vector accesses: the ceiling that memory-bound kernels
// (permute, casts, norms) are measured against, as nccl-tests and CUTLASS measure theirs.
#include <cstddef>
#include <cuda_runtime_api.h>

namespace moesim::kernels {

/// Copies `bytes` from `src` to `dst` (device pointers, 16-byte aligned) on `stream`; bytes that do
/// not fill a 16-byte vector are copied one by one.
void copy_device(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

struct CopyMeasurement {
  double seconds_median = 0;      ///< per copy, CUDA-event timed
  double bytes_per_second = 0;    ///< (read + written) bytes / time, as hardware.md quotes it
};

/// Times `repeats` copies of `bytes` after `warmup` untimed ones, after checking the copy against the
/// host reference on random data.
[[nodiscard]] CopyMeasurement measure_copy_bandwidth(std::size_t bytes, int warmup, int repeats);

}  // namespace moesim::kernels
