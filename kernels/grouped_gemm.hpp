#pragma once
// The MoE expert GEMMs over ragged per-expert token counts, BF16, both ways a framework runs them:
// cuBLAS's grouped-batched GEMM (one call, cuBLAS 12.5+) and the loop of one cuBLASLt GEMM per
// expert with tokens (what Megatron-Core / Transformer Engine fall back to without a grouped
// kernel). Expert e computes Y_e[t_e x n] = X_e[t_e x k] W_e[n x k]^T.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/blas_context.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/gemm_lt.hpp"
#include "kernels/gemm_operands.hpp"
#include "kernels/reference/compare.hpp"

namespace moesim::kernels {

struct GroupedGemmShape {
  std::vector<int> tokens;  ///< per local expert; zeros allowed
  std::int64_t n = 0;
  std::int64_t k = 0;
};

class GroupedGemm {
 public:
  GroupedGemm(const BlasContext& blas, const GroupedGemmShape& shape);

  /// "" when cublasGemmGroupedBatchedEx exists in this cuBLAS and accepted a first call, else why not.
  [[nodiscard]] const std::string& grouped_batched_problem() const { return grouped_problem_; }
  void run_grouped_batched(cudaStream_t stream);
  void run_loop(cudaStream_t stream);

  /// Poisons Y, runs one way, compares samples_per_expert seeded elements of every expert with
  /// the CPU reference.
  [[nodiscard]] Comparison check(bool grouped_batched, int samples_per_expert, cudaStream_t stream);

 private:
  void probe_grouped_batched(cudaStream_t stream);
  const BlasContext& blas_;
  GroupedGemmShape shape_;
  std::vector<std::int64_t> offsets_;  ///< first row of each expert in X and Y
  GemmOperands operands_;
  std::map<int, std::unique_ptr<LtMatmul>> loop_gemms_;  ///< one plan per distinct token count
  std::string grouped_problem_;
  // cublasGemmGroupedBatchedEx's arguments: host arrays per group, device arrays of pointers.
  std::vector<cublasOperation_t> trans_a_, trans_b_;
  std::vector<int> m_, n_, k_, lda_, ldb_, ldc_, group_size_;
  std::vector<float> alpha_, beta_;
  DeviceBuffer<const void*> a_ptrs_, b_ptrs_;
  DeviceBuffer<void*> c_ptrs_;
};

}  // namespace moesim::kernels
