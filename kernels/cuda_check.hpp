#pragma once
// Every CUDA runtime and cuBLAS / cuBLASLt call's status is checked: a failure throws with the call,
// file and line. (NCCL's check lives in nccl_check.hpp so that only its users include nccl.h.)
#include <stdexcept>
#include <string>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

namespace moesim::kernels {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws CudaError("cudaMalloc(...) failed at file:line: cudaErrorMemoryAllocation (out of memory)").
void check_cuda(cudaError_t status, const char* call, const char* file, int line);

/// Throws CudaError("cublasLtMatmul(...) failed at file:line: CUBLAS_STATUS_NOT_SUPPORTED (...)").
void check_cublas(cublasStatus_t status, const char* call, const char* file, int line);

/// After a kernel launch: the launch's own error (bad configuration), named after the kernel.
void check_launch(const char* kernel, const char* file, int line);

/// Number of CUDA devices, 0 when there is none or no driver (never throws).
[[nodiscard]] int cuda_device_count();

}  // namespace moesim::kernels

#define MOESIM_CUDA_CHECK(call) ::moesim::kernels::check_cuda((call), #call, __FILE__, __LINE__)
#define MOESIM_CUBLAS_CHECK(call) ::moesim::kernels::check_cublas((call), #call, __FILE__, __LINE__)
#define MOESIM_LAUNCH_CHECK(kernel) ::moesim::kernels::check_launch(kernel, __FILE__, __LINE__)
