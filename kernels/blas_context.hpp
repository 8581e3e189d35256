#pragma once
// cuBLAS and cuBLASLt handles with their own 32 MiB workspaces, bound to one stream. cuBLAS gets
// its workspace explicitly so that its calls can be captured into CUDA graphs.
#include <cstddef>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace moesim::kernels {

inline constexpr std::size_t kBlasWorkspaceBytes = std::size_t{32} << 20;

class BlasContext {
 public:
  explicit BlasContext(cudaStream_t stream, std::size_t workspace_bytes = kBlasWorkspaceBytes);
  ~BlasContext();
  BlasContext(const BlasContext&) = delete;
  BlasContext& operator=(const BlasContext&) = delete;

  [[nodiscard]] cublasHandle_t blas() const { return blas_; }
  [[nodiscard]] cublasLtHandle_t lt() const { return lt_; }
  [[nodiscard]] void* lt_workspace() const { return lt_workspace_; }
  [[nodiscard]] std::size_t workspace_bytes() const { return workspace_bytes_; }
  [[nodiscard]] cudaStream_t stream() const { return stream_; }

 private:
  cudaStream_t stream_;
  std::size_t workspace_bytes_;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* blas_workspace_ = nullptr;
  void* lt_workspace_ = nullptr;
};

}  // namespace moesim::kernels
