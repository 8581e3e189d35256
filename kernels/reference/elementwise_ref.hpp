#pragma once
// CPU reference of the element-wise kernels of a training step (SwiGLU, RMSNorm, AdamW), in
// double, on float inputs (BF16 tensors converted by the caller, so that finite-difference checks
// can perturb them by less than a BF16 step). Outputs are before any rounding to BF16 or FP32.
// Dropout is the exception: it takes and returns the BF16 bits and does the kernel's float
// arithmetic, so its check is bit for bit (a mask has no tolerance). AdamParams and the dropout
// decision live here, not in elementwise.hpp, so that the reference needs no CUDA header.
#include <cstdint>

#include "kernels/numeric.hpp"

namespace moesim::kernels {

/// AdamW (decoupled weight decay, PyTorch's / apex FusedAdam's adam_w_mode). `step` counts from 1
/// and sets the bias corrections 1 - beta^step.
struct AdamParams {
  float lr = 1e-4f, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f, weight_decay = 0.1f;
  int step = 1;
};

/// x * sigmoid(x).
[[nodiscard]] double silu_reference(double x);

/// out[r, j] = silu(in[r, j]) * in[r, ffn + j]; in is [rows x 2*ffn], out [rows x ffn].
void swiglu_forward_reference(const float* in, std::int64_t rows, std::int64_t ffn, double* out);

/// The gradient of sum(out * d_out) with respect to in: d_in [rows x 2*ffn] from d_out [rows x ffn].
void swiglu_backward_reference(const float* in, const float* d_out, std::int64_t rows, std::int64_t ffn, double* d_in);

/// rstd[r] = 1 / sqrt(mean_j x[r, j]^2 + eps); out[r, j] = x[r, j] * rstd[r] * gamma[j].
void rmsnorm_forward_reference(const float* x, const float* gamma, std::int64_t rows, std::int64_t hidden, double eps,
                               double* out, double* rstd);

/// The gradients of sum(out * d_out) for the rstd given (the forward's, as the kernel takes its
/// saved FP32 one): d_x [rows x hidden] written, d_gamma [hidden] accumulated into, as the kernel's.
void rmsnorm_backward_reference(const float* x, const float* gamma, const double* rstd, const float* d_out,
                                std::int64_t rows, std::int64_t hidden, double* d_x, double* d_gamma);

/// One AdamW step in double on n parameters, rounded back to the kernel's formats: master, m, v
/// (FP32) updated in place, weight[i] = bf16(new master[i]).
void adam_reference(float* master, float* m, float* v, const float* grad, std::uint16_t* weight, std::int64_t n,
                    const AdamParams& p);

/// Dropout's keep decision for element i, on both sides (the kernel calls it too): kept when random_uniform(seed, i)
/// >= 2p - 1, i.e. with probability 1 - p to within 2^-24. 2p is exact in float, so the one rounding of 2p - 1 is
/// the same whether or not a compiler contracts it into an FMA.
MOESIM_HD inline bool dropout_keep(std::uint64_t seed, std::uint64_t i, float p) {
  return random_uniform(seed, i) >= 2.0f * p - 1.0f;
}

/// The factor kept values are multiplied by (in float, as the kernel does): 1 / (1 - p).
MOESIM_HD inline float dropout_scale(float p) { return 1.0f / (1.0f - p); }

/// out[i] = bf16(in[i] * dropout_scale(p)) where mask[i] = dropout_keep(seed, first + i, p) is 1, else +0; BF16 in
/// and out. `first`: the index in the whole tensor of in[0], so that a sampled window regenerates its own mask.
void dropout_forward_reference(const std::uint16_t* in, std::int64_t n, float p, std::uint64_t seed,
                               std::uint8_t* mask, std::uint16_t* out, std::int64_t first = 0);

/// d_in[i] = bf16(d_out[i] * dropout_scale(p)) where mask[i] != 0, else +0.
void dropout_backward_reference(const std::uint16_t* d_out, const std::uint8_t* mask, std::int64_t n, float p,
                                std::uint16_t* d_in);

}  // namespace moesim::kernels
