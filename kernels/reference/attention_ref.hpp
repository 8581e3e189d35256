#pragma once
// CPU reference of unfused attention (softmax(Q K^T / sqrt(d)) V, optional causal mask) and its
// backward, in double, one head at a time. Tensors are [seq x head_dim] row-major floats.
#include <vector>

namespace moesim::kernels {

/// Softmax of one row of already-scaled scores; with `causal`, columns after `row` are masked
/// (probability 0).
void softmax_row_reference(const double* x, int seq, int row, bool causal, double* p);

/// ds = p * (dp - sum(p * dp)): the softmax backward of one row.
void softmax_backward_row_reference(const double* p, const double* dp, int seq, double* ds);

/// One query row: o_row [head_dim] and, when dq_row is not null, dQ's row for upstream gradient dout.
/// O(seq * head_dim): the sampled check at the timed shapes.
void attention_row_reference(const float* q, const float* k, const float* v, const float* dout, int seq, int head_dim,
                             bool causal, int row, double* o_row, double* dq_row);

struct AttentionHeadReference {
  std::vector<double> o, dq, dk, dv;  ///< [seq x head_dim] each; the gradients empty without backward
};

/// A whole head, forward and (when `backward`) dQ, dK, dV for upstream gradient dout.
[[nodiscard]] AttentionHeadReference attention_head_reference(const float* q, const float* k, const float* v,
                                                              const float* dout, int seq, int head_dim, bool causal,
                                                              bool backward);

}  // namespace moesim::kernels
