#pragma once
// NCCL statuses are checked like CUDA's: a failure throws CudaError naming the call, file and line,
// with NCCL's last error text (which says which rank and why).
#include <nccl.h>

namespace moesim::kernels {

void check_nccl(ncclResult_t status, const char* call, const char* file, int line);

}  // namespace moesim::kernels

#define MOESIM_NCCL_CHECK(call) ::moesim::kernels::check_nccl((call), #call, __FILE__, __LINE__)
