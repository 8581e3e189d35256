#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
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
