#pragma once
// The core of unfused attention (Megatron-Core's non-flash path) for batch_heads independent heads:
// forward S = QK^T / sqrt(d) (cublasGemmStridedBatchedEx), P = softmax(S) with the causal mask,
// O = PV; backward dV = P^T dO, dP = dO V^T, dS = softmax'(P, dP), dQ = dS K / sqrt(d),
// dK = dS^T Q / sqrt(d). Tensors are BF16 [batch_heads x seq x head_dim] row-major; the score
// matrices [batch_heads x seq x seq] are materialised, as unfused attention does. The CPU
// reference is reference/attention_ref.hpp.
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "kernels/blas_context.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/reference/compare.hpp"

namespace moesim::kernels {

struct AttentionShape {
  int batch_heads = 0;
  int seq = 0;
  int head_dim = 0;
  bool causal = true;
};

class Attention {
 public:
  /// Allocates and fills Q, K, V and dO with seeded random values; the backward buffers only when
  /// `with_backward`.
  Attention(const BlasContext& blas, const AttentionShape& shape, bool with_backward);

  /// Device bytes an instance of `shape` allocates (to size batch_heads to the free memory).
  [[nodiscard]] static std::size_t device_bytes(const AttentionShape& shape, bool with_backward);

  void forward();
  /// Needs forward()'s probabilities (kept between calls).
  void backward();

  /// Poisons the outputs, runs forward (and backward), and compares `rows` sampled query rows of O
  /// (and dQ) with the CPU reference.
  [[nodiscard]] Comparison check_forward_rows(int rows);
  [[nodiscard]] Comparison check_backward_rows(int rows);
  /// Every element of O (and dQ, dK, dV) of head `head`, against the whole-head reference.
  [[nodiscard]] Comparison check_head(int head, bool backward);

  [[nodiscard]] const AttentionShape& shape() const { return shape_; }

 private:
  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const std::uint16_t* a, int lda, std::int64_t stride_a,
            const std::uint16_t* b, int ldb, std::int64_t stride_b, std::uint16_t* c, int ldc, std::int64_t stride_c);
  [[nodiscard]] std::vector<float> head_values(std::uint64_t seed, float amplitude, int head) const;
  [[nodiscard]] std::vector<double> head_row(const DeviceBuffer<std::uint16_t>& t, int head, int row) const;

  const BlasContext& blas_;
  AttentionShape shape_;
  bool with_backward_;
  DeviceBuffer<std::uint16_t> q_, k_, v_, o_, scores_;
  DeviceBuffer<std::uint16_t> dout_, dq_, dk_, dv_, dscores_;
};

}  // namespace moesim::kernels
