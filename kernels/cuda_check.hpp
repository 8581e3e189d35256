#pragma once
// Every CUDA runtime call's status is checked: a failure throws with the call, file and line.
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace moesim::kernels {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws CudaError("cudaMalloc(...) failed at file:line: out of memory") on a non-success status.
void check_cuda(cudaError_t status, const char* call, const char* file, int line);

/// Number of CUDA devices, 0 when there is none or no driver (never throws).
[[nodiscard]] int cuda_device_count();

}  // namespace moesim::kernels

#define MOESIM_CUDA_CHECK(call) ::moesim::kernels::check_cuda((call), #call, __FILE__, __LINE__)
