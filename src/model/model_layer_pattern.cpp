#include "model/model_layer_pattern.hpp"

#include <algorithm>

namespace moesim::model {

std::vector<bool> moe_layer_pattern(const MoeLayerRule& rule, std::int64_t num_layers) {
  std::vector<bool> out(static_cast<std::size_t>(std::max<std::int64_t>(num_layers, 0)), false);
  const std::int64_t period = std::max<std::int64_t>(rule.period, 1);
  for (std::int64_t i = 0; i < num_layers; ++i) {
    out[static_cast<std::size_t>(i)] = i >= rule.first_dense && i % period == rule.phase % period;
  }
  return out;
}

std::optional<MoeLayerRule> infer_moe_layer_rule(const std::vector<bool>& pattern) {
  const auto first = std::find(pattern.begin(), pattern.end(), true);
  if (first == pattern.end()) return std::nullopt;
  const auto second = std::find(first + 1, pattern.end(), true);
  // A single MoE layer says nothing about the period; 1 reads it as "dense up to here, MoE after",
  // which is what a first_k_dense model cut down to one MoE layer means.
  const std::int64_t period = second == pattern.end() ? 1 : second - first;
  const std::int64_t first_dense = first - pattern.begin();
  const MoeLayerRule rule{first_dense, period, first_dense % period};
  if (moe_layer_pattern(rule, static_cast<std::int64_t>(pattern.size())) != pattern) return std::nullopt;
  return rule;
}

}  // namespace moesim::model
