#pragma once
// Which layers of a model are MoE layers, as a rule that survives a change of num_layers: an override
// such as {"preset": "deepseek-v3", "num_layers": 8} must keep "first 3 dense, then every layer MoE".
#include <cstdint>
#include <optional>
#include <vector>

namespace moesim::model {

/// Layer i is an MoE layer when i >= first_dense and i % period == phase. Megatron's integer
/// moe_layer_freq k is {0, k, 0}; DeepSeek's first_k_dense_replace sets first_dense; Qwen's
/// decoder_sparse_step and Llama-4's interleave_moe_layer_step s are {0, s, s - 1}.
struct MoeLayerRule {
  std::int64_t first_dense = 0;
  std::int64_t period = 1;
  std::int64_t phase = 0;
  friend bool operator==(const MoeLayerRule&, const MoeLayerRule&) = default;
};

/// One entry per layer, true = MoE. `rule.period` must be >= 1.
[[nodiscard]] std::vector<bool> moe_layer_pattern(const MoeLayerRule& rule, std::int64_t num_layers);

/// The rule that reproduces `pattern` exactly, or nullopt when none does (an irregular list, or no MoE
/// layer at all). first_dense comes back as the index of the first MoE layer.
[[nodiscard]] std::optional<MoeLayerRule> infer_moe_layer_rule(const std::vector<bool>& pattern);

}  // namespace moesim::model
