#pragma once
// CPU reference of unfused attention (softmax(Q K^T / sqrt(d)) V, optional causal mask) and its
// backward, in double, one head at a time. Tensors are row-major floats: Q, K (and dQ, dK)
// [seq x head_dim], V, O (and dO, dV) [seq x head_dim_v]; d = head_dim. The value head dimension
// may differ from the query/key one (DeepSeek-V3's multi-latent attention: 192 and 128). The
// overloads without head_dim_v are the square case, head_dim_v = head_dim.
#include <vector>

namespace moesim::kernels {

/// Softmax of one row of already-scaled scores; with `causal`, columns after `row` are masked
/// (probability 0).
void softmax_row_reference(const double* x, int seq, int row, bool causal, double* p);

/// ds = p * (dp - sum(p * dp)): the softmax backward of one row.
void softmax_backward_row_reference(const double* p, const double* dp, int seq, double* ds);

/// One query row: o_row [head_dim_v] and, when dq_row is not null, dQ's row [head_dim] for upstream gradient dout.
/// O(seq * (head_dim + head_dim_v)): the sampled check at the timed shapes.
void attention_row_reference(const float* q, const float* k, const float* v, const float* dout, int seq, int head_dim,
                             int head_dim_v, bool causal, int row, double* o_row, double* dq_row);

inline void attention_row_reference(const float* q, const float* k, const float* v, const float* dout, int seq,
                                    int head_dim, bool causal, int row, double* o_row, double* dq_row) {
  attention_row_reference(q, k, v, dout, seq, head_dim, head_dim, causal, row, o_row, dq_row);
}

struct AttentionHeadReference {
  std::vector<double> o;       ///< [seq x head_dim_v]
  std::vector<double> dq, dk;  ///< [seq x head_dim] each; empty without backward
  std::vector<double> dv;      ///< [seq x head_dim_v]; empty without backward
};

/// A whole head, forward and (when `backward`) dQ, dK, dV for upstream gradient dout.
[[nodiscard]] AttentionHeadReference attention_head_reference(const float* q, const float* k, const float* v,
                                                              const float* dout, int seq, int head_dim, int head_dim_v,
                                                              bool causal, bool backward);

[[nodiscard]] inline AttentionHeadReference attention_head_reference(const float* q, const float* k, const float* v,
                                                                     const float* dout, int seq, int head_dim,
                                                                     bool causal, bool backward) {
  return attention_head_reference(q, k, v, dout, seq, head_dim, head_dim, causal, backward);
}

}  // namespace moesim::kernels
