#pragma once
// Parameter and FLOP counts in Megatron-Core's convention (megatron/training/training.py
// num_floating_point_operations; theoretical_memory_usage.py), see ../shared/research/ecosystem.md §4.
#include <cstdint>
#include <string_view>

#include "core/named_enum.hpp"
#include "model/model_spec.hpp"

namespace moesim::model {

/// Parameters of one transformer layer, split the way the parallel layout shards them.
struct LayerParams {
  double attention = 0;       ///< QKV/MLA projections + output projection (+ biases), TP-sharded
  double dense_mlp = 0;       ///< dense FFN (0 in an MoE layer), TP-sharded
  double routed_experts = 0;  ///< all routed experts of the layer, EP×ETP-sharded
  double routed_expert_one = 0;  ///< one routed expert
  double shared_experts = 0;  ///< shared experts (dense, TP-sharded)
  double router = 0;          ///< router weight h×E (replicated within TP)
  double norms = 0;           ///< LayerNorm/RMSNorm weights (replicated)
  [[nodiscard]] double total() const { return attention + dense_mlp + routed_experts + shared_experts + router + norms; }
};

struct ParamCounts {
  double total = 0;            ///< every weight of the model, MTP excluded (the number papers publish)
  double active = 0;           ///< weights touched by one token: top-k routed experts + everything dense
  double embedding = 0;        ///< input embedding V×h
  double output_layer = 0;     ///< LM head V×h (0 when tied to the embedding)
  double transformer_layers = 0;
  double mtp = 0;              ///< multi-token-prediction modules (not in `total`)
  double expert_params = 0;    ///< all routed-expert weights
};

[[nodiscard]] LayerParams layer_params(const ModelSpec& spec, std::int64_t layer);
[[nodiscard]] ParamCounts count_params(const ModelSpec& spec);

/// How attention-core FLOPs are counted.
enum class FlopsConvention {
  kMegatron,  ///< current Megatron-Core: causal attention counts half of s² (bidirectional counts all)
  kFullS2,    ///< Megatron before 2025 (and NeMo): s² counted in full even for causal models
};
inline constexpr auto kFlopsConventionNames = std::to_array<EnumName<FlopsConvention>>(
    {{FlopsConvention::kMegatron, "megatron"}, {FlopsConvention::kFullS2, "full-s2"}});
[[nodiscard]] std::string_view to_string(FlopsConvention c);

/// Model FLOPs of one optimizer step (forward + backward, no recompute): 3 × 2 × Σ GEMM m·n·k over
/// `global_batch` sequences of `seq` tokens, attention core per the convention, logits and MTP
/// included, router excluded (as Megatron counts it).
[[nodiscard]] double model_flops_per_step(const ModelSpec& spec, std::int64_t seq, std::int64_t global_batch,
                                          FlopsConvention convention);

}  // namespace moesim::model
