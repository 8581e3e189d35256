#pragma once
// MoE token permutation on the GPU (the CPU reference is reference/permute_ref.hpp): permute
// gathers token rows into expert-sorted order before the grouped GEMM; unpermute gathers each
// token's k expert outputs back and sums them weighted by the router probabilities (FP32
// accumulation, BF16 out). Rows are BF16, hidden a multiple of 8 (16-byte rows).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace moesim::kernels {

inline constexpr int kPermuteMaxTopk = 16;

/// out[r, :] = in[permuted_token[r], :] for r < rows; in is [tokens x hidden], out [rows x hidden].
void permute_tokens(const std::uint16_t* in, const std::int32_t* permuted_token, int rows, int hidden, std::uint16_t* out,
                    cudaStream_t stream);

/// out[t, :] = bf16(sum_s probs[t*topk + s] * permuted[permuted_row[t*topk + s], :]); a copy whose
/// permuted_row is negative (dropped) adds nothing.
void unpermute_tokens(const std::uint16_t* permuted, const std::int32_t* permuted_row, const float* probs, int tokens,
                      int topk, int hidden, std::uint16_t* out, cudaStream_t stream);

/// Bytes through HBM: every permuted row read once and written once, plus the row map.
[[nodiscard]] std::size_t permute_bytes(int tokens, int topk, int hidden);
/// Bytes through HBM: the k copies read, the tokens written, plus the row map and probabilities.
[[nodiscard]] std::size_t unpermute_bytes(int tokens, int topk, int hidden);

}  // namespace moesim::kernels
