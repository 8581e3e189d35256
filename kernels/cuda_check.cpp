#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

void check_launch(const char* kernel, const char* file, int line) {
  const cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess) return;
  throw CudaError(std::string("launch of ") + kernel + " failed at " + file + ":" + std::to_string(line) + ": " +
                  cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

}  // namespace moesim::kernels
