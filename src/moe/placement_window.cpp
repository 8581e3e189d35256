#include "moe/placement_window.hpp"

#include <algorithm>

namespace moesim::moe {

ExpertLoadModel placement_profile_model(const Scenario& s, std::int64_t ep_ranks_per_domain) {
  const PlacementSpec& pl = s.moe.placement;
  if (!pl.profile) return expert_load_model(s, ep_ranks_per_domain);
  Scenario profiled = s;
  profiled.moe.routing = *pl.profile;
  return expert_load_model(profiled, ep_ranks_per_domain);
}

namespace {

/// The step of the interval before that sample `i` of `samples` falls in: −1 … −interval_steps.
std::int64_t window_step(std::int64_t i, std::int64_t samples, std::int64_t interval_steps) {
  return -1 - i * interval_steps / std::max<std::int64_t>(samples, 1);
}

}  // namespace

std::vector<double> window_loads(const ExpertLoadModel& profile, std::int64_t layer, std::int64_t routed_tokens,
                                 std::int64_t interval_steps, std::int64_t microbatches) {
  const std::int64_t k = std::max<std::int64_t>(interval_steps, 1);
  std::vector<double> out(static_cast<std::size_t>(profile.experts()), 0.0);
  if (microbatches > 0) {
    for (std::int64_t mb = 0; mb < microbatches; ++mb) {
      const std::vector<double> draw = profile.expert_tokens(routed_tokens, layer, mb, window_step(mb, microbatches, k));
      for (std::size_t e = 0; e < out.size(); ++e) out[e] += draw[e];
    }
    return out;
  }
  const std::int64_t steps = std::min(k, kMaxWindowSteps);
  const double copies = static_cast<double>(routed_tokens * profile.topk());
  for (std::int64_t i = 0; i < steps; ++i) {
    const std::vector<double> p = profile.popularity(layer, window_step(i, steps, k));
    for (std::size_t e = 0; e < out.size(); ++e) out[e] += p[e] * copies / static_cast<double>(steps);
  }
  return out;
}

ExpertPlacement eplb_placement(const Scenario& s, const std::vector<double>& expert_loads) {
  const std::int64_t ep = std::max<std::int64_t>(s.parallel.ep, 1);
  return balanced_placement(expert_loads, ep, s.moe.placement.redundant_experts / ep);
}

ExpertPlacement eplb_placement(const Scenario& s, const ExpertLoadModel& profile, std::int64_t layer,
                               std::int64_t routed_tokens, std::int64_t microbatches) {
  return eplb_placement(
      s, window_loads(profile, layer, routed_tokens, s.moe.placement.rebalance_interval_steps, microbatches));
}

}  // namespace moesim::moe
