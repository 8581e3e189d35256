#pragma once
// MoE router on the GPU: scoring (softmax or sigmoid) and top-k over [tokens x experts] FP32
// logits, one warp per token. The CPU reference is reference/router_ref.hpp.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/reference/router_ref.hpp"

namespace moesim::kernels {

inline constexpr int kRouterMaxExperts = 512;
inline constexpr int kRouterMaxTopk = 16;

struct RouterShape {
  int tokens = 0;
  int experts = 0;  ///< 1..512
  int topk = 0;     ///< 1..min(16, experts)
};

/// indices [tokens x topk] (best first) and probabilities [tokens x topk], as
/// router_reference_row; throws std::invalid_argument outside the supported shapes.
void router_topk(const float* logits, const RouterShape& shape, RouterScoring scoring, std::int32_t* indices,
                 float* probabilities, cudaStream_t stream);

/// Bytes through HBM: the logits read once, indices and probabilities written once.
[[nodiscard]] std::size_t router_bytes(const RouterShape& shape);

}  // namespace moesim::kernels
