#include "kernels/nccl_check.hpp"

#include <string>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  std::string message = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + ncclGetErrorString(status);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0') message += std::string(" (") + last + ")";
  throw CudaError(message);
}

}  // namespace moesim::kernels
