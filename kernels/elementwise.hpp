#pragma once
// The element-wise kernels of a training step on the GPU (CPU references:
// reference/elementwise_ref.hpp): the SwiGLU activation of the MLPs, RMSNorm, the AdamW
// optimizer step, and the dropout of unfused attention's probabilities. BF16 tensors
// (std::uint16_t bit patterns), FP32 math. Sizes are 64-bit: a row
// count times a width, or an optimizer's parameter count, can pass 2^31. Rows of 16-byte aligned
// tensors whose width is a multiple of 8 move as 16-byte vectors; any other width or alignment
// takes a scalar path (slower, same results). Negative sizes throw std::invalid_argument; zero rows
// or parameters launch nothing.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/reference/elementwise_ref.hpp"

namespace moesim::kernels {

/// RMSNorm keeps a row in registers: the widest row it takes.
inline constexpr std::int64_t kRmsNormMaxHidden = 16384;

/// SwiGLU: out[r, j] = silu(in[r, j]) * in[r, ffn + j], in [rows x 2*ffn] BF16, out [rows x ffn] BF16, FP32 math.
void swiglu_forward(const std::uint16_t* in, std::int64_t rows, std::int64_t ffn, std::uint16_t* out,
                    cudaStream_t stream);

/// d_in [rows x 2*ffn] from in [rows x 2*ffn] and d_out [rows x ffn] (BF16).
void swiglu_backward(const std::uint16_t* in, const std::uint16_t* d_out, std::int64_t rows, std::int64_t ffn,
                     std::uint16_t* d_in, cudaStream_t stream);

/// RMSNorm over rows of `hidden`: out = x * rstd * gamma, rstd[r] = 1/sqrt(mean(x^2) + eps) saved (FP32) for the
/// backward. Throws std::invalid_argument unless 0 < hidden <= kRmsNormMaxHidden.
void rmsnorm_forward(const std::uint16_t* x, const std::uint16_t* gamma, std::int64_t rows, std::int64_t hidden,
                     float eps, std::uint16_t* out, float* rstd, cudaStream_t stream);

/// d_x (BF16) and d_gamma (FP32 [hidden], ACCUMULATED into: the caller zeroes it once per step) from x, gamma,
/// rstd, d_out. d_gamma's sums arrive by FP32 atomics, one per column per block, in whatever order the blocks
/// finish: its last bits vary from run to run (a timing proxy does not mind; checks use a tolerance).
void rmsnorm_backward(const std::uint16_t* x, const std::uint16_t* gamma, const float* rstd,
                      const std::uint16_t* d_out, std::int64_t rows, std::int64_t hidden, std::uint16_t* d_x,
                      float* d_gamma, cudaStream_t stream);

/// One AdamW step over n parameters: FP32 master, m, v updated from FP32 grad (bias-corrected with step), the
/// BF16 model weight rewritten from the master. Throws std::invalid_argument when p.step < 1.
void adam_update(float* master, float* m, float* v, const float* grad, std::uint16_t* weight, std::int64_t n,
                 const AdamParams& p, cudaStream_t stream);

/// out[i] = in[i] * mask[i] / (1 - p), mask[i] = 1 with probability 1 - p from a counter-based hash of (seed, i)
/// (so the CPU reference regenerates it), stored as one byte per element as Megatron's unfused path keeps it.
/// 0 <= p < 1. The decision is dropout_keep(seed, i, p) and the factor dropout_scale(p), in float
/// (reference/elementwise_ref.hpp), so the reference's mask and output are bit for bit the kernel's. out may be in
/// (in place), not partly overlap it. Throws std::invalid_argument when n < 0 or p is outside [0, 1).
void dropout_forward(const std::uint16_t* in, std::int64_t n, float p, std::uint64_t seed, std::uint8_t* mask,
                     std::uint16_t* out, cudaStream_t stream);

/// d_in[i] = d_out[i] * mask[i] / (1 - p). d_in may be d_out (in place).
void dropout_backward(const std::uint16_t* d_out, const std::uint8_t* mask, std::int64_t n, float p,
                      std::uint16_t* d_in, cudaStream_t stream);

/// Bytes through HBM: in read, out written (3 x 2 bytes per output element).
[[nodiscard]] std::size_t swiglu_forward_bytes(std::int64_t rows, std::int64_t ffn);
/// Bytes through HBM: in and d_out read, d_in written (5 x 2 bytes per output element).
[[nodiscard]] std::size_t swiglu_backward_bytes(std::int64_t rows, std::int64_t ffn);
/// Bytes through HBM: x read and out written once, gamma read, rstd written.
[[nodiscard]] std::size_t rmsnorm_forward_bytes(std::int64_t rows, std::int64_t hidden);
/// Bytes through HBM: x and d_out read, d_x written, gamma and rstd read, d_gamma read and written.
[[nodiscard]] std::size_t rmsnorm_backward_bytes(std::int64_t rows, std::int64_t hidden);
/// Bytes through HBM: master, m, v and grad read, master, m, v and the BF16 weight written (30 per parameter).
[[nodiscard]] std::size_t adam_bytes(std::int64_t n);
/// Bytes through HBM: in read, the mask and out written (2 + 1 + 2 per element).
[[nodiscard]] std::size_t dropout_forward_bytes(std::int64_t n);
/// Bytes through HBM: d_out and the mask read, d_in written (2 + 1 + 2 per element).
[[nodiscard]] std::size_t dropout_backward_bytes(std::int64_t n);

}  // namespace moesim::kernels
