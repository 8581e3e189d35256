#pragma once
// CPU reference of the MoE router: scoring + top-k over one token's expert logits.
#include <cstdint>
#include <vector>

namespace moesim::kernels {

enum class RouterScoring {
  /// probabilities = softmax over all experts, read at the chosen ones (not renormalised):
  /// Megatron-Core's moe_router_pre_softmax / DeepSeek-V2 form. Softmax is monotonic, so the
  /// chosen experts are the top-k logits.
  kSoftmax,
  /// scores = sigmoid(logit); the chosen scores divided by their sum (DeepSeek-V3,
  /// moe_router_score_function=sigmoid with top-k normalisation).
  kSigmoid,
};

/// Top-k of one token by repeated arg-max (ties: the lower expert index first), with the
/// probabilities of `scoring`, computed in double. Writes k indices and k probabilities, best first.
void router_reference_row(const float* logits, int experts, int k, RouterScoring scoring, std::int32_t* indices,
                          float* probabilities);

/// The same choice by a full sort of (logit, index) pairs: the independent check of the above.
[[nodiscard]] std::vector<std::int32_t> topk_by_full_sort(const float* logits, int experts, int k);

}  // namespace moesim::kernels
