#pragma once
// Megatron-Core's memory offloading (../shared/spec/scenario.md Additions, `offload`): fine-grained
// activation offloading of named modules (--fine-grained-activation-offloading --offload-modules) and
// optimizer state on the host (--optimizer-cpu-offload --optimizer-offload-fraction). Their spelling
// in scenario files, results and messages is the table below, in Megatron's help-text order.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/named_enum.hpp"

namespace moesim {

/// A module whose saved-for-backward inputs go to host memory after its forward and come back before
/// its backward (Megatron docs/source/api-guide/fine_grained_activation_offloading.md).
enum class OffloadModule { kAttnNorm, kQkvLinear, kCoreAttn, kAttnProj, kMlpNorm, kExpertFc1, kMoeAct };

inline constexpr auto kOffloadModuleNames = std::to_array<EnumName<OffloadModule>>(
    {{OffloadModule::kAttnNorm, "attn_norm"},
     {OffloadModule::kQkvLinear, "qkv_linear"},
     {OffloadModule::kCoreAttn, "core_attn"},
     {OffloadModule::kAttnProj, "attn_proj"},
     {OffloadModule::kMlpNorm, "mlp_norm"},
     {OffloadModule::kExpertFc1, "expert_fc1"},
     {OffloadModule::kMoeAct, "moe_act"}});

[[nodiscard]] constexpr std::string_view to_string(OffloadModule m) { return name_of(kOffloadModuleNames, m); }

struct OffloadSpec {
  /// The modules whose inputs are offloaded, as written (empty: no activation offloading).
  std::vector<OffloadModule> activations;
  /// Share of the optimizer state (fp32 master, Adam m and v) kept and updated on the host (0: none).
  double optimizer_fraction = 0.0;
  [[nodiscard]] bool has(OffloadModule m) const {
    return std::find(activations.begin(), activations.end(), m) != activations.end();
  }
  [[nodiscard]] bool any() const { return !activations.empty() || optimizer_fraction > 0.0; }
};

/// The modules' names joined by `separator` ("expert_fc1+moe_act"), for messages and descriptions.
[[nodiscard]] inline std::string offload_modules_text(const std::vector<OffloadModule>& modules,
                                                      std::string_view separator) {
  std::string out;
  for (OffloadModule m : modules) {
    if (!out.empty()) out += separator;
    out += to_string(m);
  }
  return out;
}

/// The activation offloading the planner adds to a layout that does not fit when the scenario sets
/// none (Candidate::offload): an MoE model's routed-expert inputs (expert_fc1, moe_act: its largest
/// saved tensors), a dense model's attention inputs (core_attn, attn_proj).
[[nodiscard]] inline std::vector<OffloadModule> rescue_offload_modules(bool moe_model) {
  if (moe_model) return {OffloadModule::kExpertFc1, OffloadModule::kMoeAct};
  return {OffloadModule::kCoreAttn, OffloadModule::kAttnProj};
}

}  // namespace moesim
