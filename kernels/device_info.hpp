#pragma once
// What a profile's provenance records about the device and the libraries it was measured with.
#include <cstddef>
#include <string>

namespace moesim::kernels {

struct DeviceInfo {
  std::string name;           ///< "NVIDIA H200"
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_clock_mhz = 0;       ///< peak (boost) SM clock the driver reports
  int memory_clock_mhz = 0;   ///< peak memory clock
  std::size_t total_memory = 0;
  int l2_bytes = 0;
};

/// Throws CudaError when the device cannot be queried.
[[nodiscard]] DeviceInfo query_device(int device);

/// The kernel driver's version ("580.159.03", from /proc/driver/nvidia/version) followed by the
/// CUDA driver API version it supports ("580.159.03 (CUDA 13.0)"); the latter alone when the
/// former cannot be read (containers without /proc/driver).
[[nodiscard]] std::string driver_version();
/// "13.0" from cudaRuntimeGetVersion.
[[nodiscard]] std::string cuda_runtime_version();
/// "13.1.0" from cublasLtGetVersion.
[[nodiscard]] std::string cublas_version();

}  // namespace moesim::kernels
