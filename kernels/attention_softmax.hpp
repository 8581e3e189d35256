#pragma once
// The softmax of unfused attention on BF16 score rows, in place, with the causal mask (Megatron's
// scaled_upper_triang_masked_softmax, the scale already applied by the QK^T GEMM), and its
// backward. Row r of a [rows x seq] matrix is query position r % seq.
#include <cstdint>

#include <cuda_runtime_api.h>

namespace moesim::kernels {

/// scores <- softmax(scores) per row; with `causal`, columns after the query position become 0.
void softmax_forward(std::uint16_t* scores, std::int64_t rows, int seq, bool causal, cudaStream_t stream);

/// grad <- probs * (grad - rowsum(probs * grad)): dP in, dS out (probs from softmax_forward).
void softmax_backward(const std::uint16_t* probs, std::uint16_t* grad, std::int64_t rows, int seq, bool causal, cudaStream_t stream);

}  // namespace moesim::kernels
