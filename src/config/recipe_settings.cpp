#include "config/recipe_settings.hpp"

#include <algorithm>
#include <map>

#include "config/embedded_json.hpp"
#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace moesim::config {
namespace {

const Json& settings_document() {
  static const Json doc = parse_json_text(builtin_file_text(kBuiltinRecipeSettingsFile), kBuiltinRecipeSettingsFile);
  return doc;
}

std::string text_or_empty(const Json& row, const char* key) {
  const auto it = row.find(key);
  return it != row.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// --cuda-graph-impl and --cuda-graph-scope as Megatron-Core reads them: "none" (or unset) is eager;
// "local" without a scope graphs whole layers, "local" with full_iteration the whole step;
// "full_iteration" is the whole step; "transformer_engine" graphs the listed scopes.
std::vector<CudaGraphScope> cuda_graph_of(const Json& row, const std::string& id) {
  const std::string impl = text_or_empty(row, "cuda_graph_impl");
  std::vector<CudaGraphScope> scopes;
  if (const auto it = row.find("cuda_graph_scope"); it != row.end() && it->is_array()) {
    for (const Json& name : *it) {
      const auto scope = name.is_string() ? value_of(kCudaGraphScopeNames, name.get<std::string>()) : std::nullopt;
      if (!scope) throw InternalError(id + ": unknown CUDA-graph scope " + name.dump() + " in " + kBuiltinRecipeSettingsFile);
      scopes.push_back(*scope);
    }
  }
  if (impl.empty() || impl == "none") return {};
  if (impl == "full_iteration") return {CudaGraphScope::kFullIteration};
  if (impl == "local") return scopes.empty() ? std::vector<CudaGraphScope>{CudaGraphScope::kLayer} : scopes;
  if (impl == "transformer_engine") return scopes;
  throw InternalError(id + ": unknown cuda_graph_impl \"" + impl + "\" in " + kBuiltinRecipeSettingsFile);
}

// Each recipe switch that is set turns its fusion on or off; an unset one keeps Megatron-Core's default.
std::vector<Fusion> fusions_of(const Json& row) {
  std::vector<Fusion> out(kMegatronDefaultFusions.begin(), kMegatronDefaultFusions.end());
  const std::pair<const char*, Fusion> switches[] = {{"moe_permute_fusion", Fusion::kMoePermute},
                                                     {"moe_router_fusion", Fusion::kMoeRouter},
                                                     {"cross_entropy_loss_fusion", Fusion::kCrossEntropy},
                                                     {"bias_activation_fusion", Fusion::kBiasSwiglu},
                                                     {"apply_rope_fusion", Fusion::kRope},
                                                     {"gradient_accumulation_fusion", Fusion::kGradientAccumulation}};
  for (const auto& [key, fusion] : switches) {
    const auto it = row.find(key);
    if (it == row.end() || !it->is_boolean()) continue;
    const auto at = std::find(out.begin(), out.end(), fusion);
    if (it->get<bool>() && at == out.end()) out.push_back(fusion);
    if (!it->get<bool>() && at != out.end()) out.erase(at);
  }
  // Reported in the name table's order, whatever order the switches came in.
  std::vector<Fusion> ordered;
  for (const auto& entry : kFusionNames) {
    if (std::find(out.begin(), out.end(), entry.value) != out.end()) ordered.push_back(entry.value);
  }
  return ordered;
}

}  // namespace

std::optional<RecipeSettings> bridge_recipe_settings(const std::string& id) {
  const Json& doc = settings_document();
  // A published point's id is its run's id followed by the metric ("...-8-0-tokens_per_s_per_gpu").
  const Json* found = nullptr;
  std::size_t longest = 0;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& run = it.key();
    const bool match = id == run || (id.size() > run.size() && id.compare(0, run.size(), run) == 0 && id[run.size()] == '-');
    if (match && run.size() > longest && it->is_object()) {
      found = &*it;
      longest = run.size();
    }
  }
  if (!found) return std::nullopt;
  const Json& row = *found;
  RecipeSettings out;
  out.cuda_graph = cuda_graph_of(row, id);
  out.fusions = fusions_of(row);
  if (const auto c = row.find("moe_expert_capacity_factor"); c != row.end() && c->is_number()) {
    out.capacity_factor = c->get<double>();
  }
  if (const auto p = row.find("moe_pad_expert_input_to_capacity"); p != row.end() && p->is_boolean()) {
    out.pad_to_capacity = p->get<bool>();
  }
  out.release = text_or_empty(row, "release");
  out.resolution = text_or_empty(row, "resolution");
  if (const auto m = row.find("layout_mismatch"); m != row.end() && m->is_array()) {
    for (const Json& field : *m) {
      if (field.is_string()) out.layout_mismatch.push_back(field.get<std::string>());
    }
  }
  if (const auto s = row.find("sources"); s != row.end() && s->is_array()) {
    for (const Json& source : *s) {
      if (!source.is_string()) continue;
      out.sources += (out.sources.empty() ? "" : "; ") + source.get<std::string>();
    }
  }
  return out;
}

}  // namespace moesim::config
