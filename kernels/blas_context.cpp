#include "kernels/blas_context.hpp"

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {

BlasContext::BlasContext(cudaStream_t stream, std::size_t workspace_bytes) : stream_(stream), workspace_bytes_(workspace_bytes) {
  MOESIM_CUBLAS_CHECK(cublasCreate(&blas_));
  MOESIM_CUBLAS_CHECK(cublasLtCreate(&lt_));
  MOESIM_CUDA_CHECK(cudaMalloc(&blas_workspace_, workspace_bytes_));
  MOESIM_CUDA_CHECK(cudaMalloc(&lt_workspace_, workspace_bytes_));
  MOESIM_CUBLAS_CHECK(cublasSetStream(blas_, stream_));
  MOESIM_CUBLAS_CHECK(cublasSetWorkspace(blas_, blas_workspace_, workspace_bytes_));
}

BlasContext::~BlasContext() {
  if (blas_ != nullptr) (void)cublasDestroy(blas_);
  if (lt_ != nullptr) (void)cublasLtDestroy(lt_);
  if (blas_workspace_ != nullptr) (void)cudaFree(blas_workspace_);
  if (lt_workspace_ != nullptr) (void)cudaFree(lt_workspace_);
}

}  // namespace moesim::kernels
