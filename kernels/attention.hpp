#pragma once
// The core of unfused attention (Megatron-Core's non-flash path) for batch_heads independent heads:
// forward S = QK^T / sqrt(d) (cublasGemmStridedBatchedEx), P = softmax(S) with the causal mask,
// O = PV; backward dV = P^T dO, dP = dO V^T, dS = softmax'(P, dP), dQ = dS K / sqrt(d),
// dK = dS^T Q / sqrt(d). Tensors are BF16 row-major: Q, K, dQ, dK [batch_heads x seq x head_dim],
// V, O, dO, dV [batch_heads x seq x head_dim_v], d = head_dim. The value head dimension may differ
// from the query/key one (DeepSeek-V3's multi-latent attention: 192 and 128): S and the scale
// follow head_dim, O has head_dim_v columns and dP = dO V^T reduces over them. The score matrices
// [batch_heads x seq x seq] are materialised, as unfused attention does. The CPU reference is
// reference/attention_ref.hpp.
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
  int head_dim = 0;  ///< of Q and K (and of the softmax scale 1 / sqrt(head_dim))
  bool causal = true;
  int head_dim_v = 0;  ///< 0: same as head_dim. Last, so that AttentionShape{bh, seq, head_dim, causal} still works.

  /// The value head dimension in effect: head_dim_v, or head_dim when it is 0.
  [[nodiscard]] int value_dim() const { return head_dim_v != 0 ? head_dim_v : head_dim; }
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
  void gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
            std::int64_t stride_a, const std::uint16_t* b, int ldb, std::int64_t stride_b, std::uint16_t* c, int ldc,
            std::int64_t stride_c);
  // `width`: the tensor's head dimension, head_dim (Q, K, dQ, dK) or value_dim() (V, O, dO, dV).
  [[nodiscard]] std::vector<float> head_values(std::uint64_t seed, float amplitude, int head, int width) const;
  [[nodiscard]] std::vector<double> head_row(const DeviceBuffer<std::uint16_t>& t, int head, int row, int width) const;

  const BlasContext& blas_;
  AttentionShape shape_;
  bool with_backward_;
  DeviceBuffer<std::uint16_t> q_, k_, v_, o_, scores_;
  DeviceBuffer<std::uint16_t> dout_, dq_, dk_, dv_, dscores_;
};

}  // namespace moesim::kernels
