#include "validate/phases.hpp"

#include <array>

namespace moesim::validate {
namespace {

/// "expert_fc1 (wgrad)" → "expert_fc1": backward, recompute and gradient variants share the phase.
std::string_view base_name(std::string_view name) {
  const std::size_t paren = name.find(" (");
  return paren == std::string_view::npos ? name : name.substr(0, paren);
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The MLP / MoE block of program/layer_cost.cpp: its norm and residual, the dense MLP, and the
// router, permutation, experts (routed and shared) of an MoE layer.
constexpr std::array<std::string_view, 8> kMlpNames{"pre_mlp_norm", "mlp_residual", "fc1",     "fc2",
                                                    "activation",   "permute",      "unpermute", "router"};
constexpr std::array<std::string_view, 3> kMlpPrefixes{"expert_", "shared_", "router_"};
constexpr std::array<std::string_view, 5> kHeadNames{"embedding", "final_norm", "lm_head", "cross_entropy",
                                                     "output_layer"};

}  // namespace

std::string phase_of(std::string_view category, std::string_view op_name) {
  if (category == "tp_comm" || category == "ep_comm" || category == "dp_comm") return std::string(category);
  if (category != "compute") return "other";
  const std::string_view name = base_name(op_name);
  if (name == "optimizer_step") return "optimizer";
  for (std::string_view h : kHeadNames) {
    if (name == h) return "head";
  }
  if (starts_with(name, "mtp_")) return "head";
  for (std::string_view m : kMlpNames) {
    if (name == m) return "mlp";
  }
  for (std::string_view m : kMlpPrefixes) {
    if (starts_with(name, m)) return "mlp";
  }
  return "attention";
}

std::map<std::string, double> timeline_phases(const Timeline& t, std::int32_t process) {
  std::map<std::string, double> out;
  for (const TimelineEvent& e : t.events) {
    if (e.process != process) continue;
    const std::string phase = phase_of(t.names[e.category], t.names[e.name]);
    out[phase] += static_cast<double>(e.duration_ps) * 1e-12;
  }
  return out;
}

}  // namespace moesim::validate
