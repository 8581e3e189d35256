#pragma once
// GEMM through cuBLASLt in Transformer Engine's forward layout: Y[m x n] = X[m x k] W[n x k]^T with
// X and W K-contiguous ("TN" in cuBLAS's column-major terms: A = W transposed, B = X), BF16 out.
// The heuristic's top algorithms are kept so that each can be timed: "our call" is heuristic #0,
// what a framework calling cuBLASLt once per shape gets. The CPU reference is reference/gemm_ref.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "kernels/reference/gemm_ref.hpp"

namespace moesim::kernels {

struct GemmShape {
  std::int64_t m = 0;  ///< tokens: rows of X and Y
  std::int64_t n = 0;  ///< output features: rows of W, columns of Y
  std::int64_t k = 0;  ///< reduction
};

/// Device pointers of one call. Scales: one FP32 each for kFp8; scale tensors for the block
/// formats; unused for kBf16.
/// Which product of a linear layer Y = X W^T (X [tokens x in], W [out x in], row-major) a call computes,
/// with the operands as the layer stores them (no transposed copies, as Transformer Engine's BF16 path):
/// kForward Y[m x n] = X[m x k] W[n x k]^T; kDgrad dX[m x n] = dY[m x k] W[k x n] (n = in, k = out);
/// kWgrad dW[m x n] = dY[k x m]^T X[k x n] (m = out, n = in, k = tokens). In every case `x` is the
/// left operand as stored (X, dY, dY) and `w` the right one (W, W, X). FP8/block formats: kForward only
/// (Hopper's FP8 tensor cores take K-contiguous operands alone).
enum class GemmLayout { kForward, kDgrad, kWgrad };

struct GemmPointers {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  const void* x_scale = nullptr;
  const void* w_scale = nullptr;
};

/// Why `p` cannot run on a device of compute capability cc_major.cc_minor with this cuBLASLt, or
/// "" when it may (the heuristic has the last word): FP8 needs sm_89+, MXFP8/NVFP4 sm_100+ and
/// cuBLASLt 12.8+.
[[nodiscard]] std::string gemm_precision_problem(GemmPrecision p, int cc_major, int cc_minor);

class LtMatmul {
 public:
  /// Describes the GEMM and asks the heuristic for up to `max_algorithms` algorithms that fit in
  /// `workspace_bytes` with operands aligned to `alignment_bytes`. A combination the library does not
  /// support leaves supported() false with the reason; other failures throw CudaError.
  /// `accumulate_fp32`: Y is FP32 and the product is added to it (beta = 1), as Megatron's
  /// gradient-accumulation fusion adds each weight gradient into the FP32 main-grad buffer (BF16 only).
  LtMatmul(cublasLtHandle_t handle, GemmPrecision precision, const GemmShape& shape, std::size_t workspace_bytes,
           int max_algorithms, unsigned alignment_bytes = 256, GemmLayout layout = GemmLayout::kForward,
           bool accumulate_fp32 = false);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  [[nodiscard]] bool supported() const { return !algorithms_.empty(); }
  [[nodiscard]] const std::string& unsupported_reason() const { return reason_; }
  [[nodiscard]] int algorithm_count() const { return static_cast<int>(algorithms_.size()); }
  [[nodiscard]] GemmPrecision precision() const { return precision_; }
  [[nodiscard]] const GemmShape& shape() const { return shape_; }

  /// Enqueues Y = X W^T with heuristic result `algorithm` (0 = the heuristic's choice).
  void run(const GemmPointers& p, int algorithm, void* workspace, cudaStream_t stream);

 private:
  cublasLtHandle_t handle_;
  GemmPrecision precision_;
  GemmShape shape_;
  std::size_t workspace_bytes_;
  bool accumulate_ = false;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algorithms_;
  std::string reason_;
};

}  // namespace moesim::kernels
