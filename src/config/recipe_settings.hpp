#pragma once
// The software settings of each Megatron-Bridge performance run, read from the public release recipes
// (tests/validation/megatron-bridge-recipe-settings.json, a verbatim copy of
// ../shared/validation/megatron-bridge-recipe-settings.json: per run id, the recipe's CUDA-graph
// implementation and scopes, fusions, capacity factor and padding, with the commit:path of every
// recipe file in `sources`). Built into the binary as the published measurements are.
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace moesim::config {

inline constexpr const char* kBuiltinRecipeSettingsFile = "tests/validation/megatron-bridge-recipe-settings.json";

struct RecipeSettings {
  std::vector<CudaGraphScope> cuda_graph;  ///< empty: eager
  std::vector<Fusion> fusions;             ///< Megatron-Core's defaults with the recipe's switches applied
  std::optional<double> capacity_factor;   ///< moe_expert_capacity_factor (token-drop runs)
  bool pad_to_capacity = false;            ///< moe_pad_expert_input_to_capacity
  std::string release;                     ///< "26.04"
  std::string resolution;                  ///< "full", "partial", ...: how completely the recipe was resolved
  /// The published layout fields the matched recipe config sets otherwise ("tp", "pp", "gbs", ...):
  /// empty when the recipe's layout is the run's (layout_matches_recipe).
  std::vector<std::string> layout_mismatch;
  std::string sources;                     ///< the recipe files, commit:path, joined
};

/// The settings of Megatron-Bridge run `id` ("mb-26-04-pre-training-dgx-b200-...", or a published
/// point's id, the run's followed by "-METRIC"), or nullopt when the file has no such run. A row the file holds but cannot map (an unknown CUDA-graph
/// implementation or scope) is an InternalError: the copy is checked in and tested.
[[nodiscard]] std::optional<RecipeSettings> bridge_recipe_settings(const std::string& id);

}  // namespace moesim::config
