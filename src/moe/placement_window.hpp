#pragma once
// The loads an expert-parallel load balancer places from. A deployed balancer (DeepSeek's EPLB)
// recomputes the placement every `rebalance_interval_steps` steps from the expert loads it counted
// over the interval before, and the placement then serves steps it has not seen: fresh multinomial
// noise always, and under per-step variation a popularity that has moved since. Both fidelities
// place from this window and judge on the step's own loads (scenario moe.placement).
#include <cstdint>
#include <vector>

#include "moe/expert_loads.hpp"
#include "moe/placement.hpp"
#include "scenario/scenario.hpp"

namespace moesim::moe {

/// Steps of the interval before the one served that the window samples: every step when the
/// interval is short, else this many spread evenly over it (the mean of more per-step popularities
/// moves by less than their noise).
inline constexpr std::int64_t kMaxWindowSteps = 16;

/// The load model the window is drawn from: moe.placement.profile when set, else moe.routing; same
/// experts, top-k, seed and device-limited domain as expert_load_model(s, ep_ranks_per_domain).
[[nodiscard]] ExpertLoadModel placement_profile_model(const Scenario& s, std::int64_t ep_ranks_per_domain);

/// Copies per expert that layer `layer` received over the window, `routed_tokens` routed per
/// micro-batch: the sum of `microbatches` draws spread over steps −1 … −interval_steps (the steps of
/// the interval before), or with `microbatches` 0 their expectation (the mean popularity of the
/// window's steps × routed_tokens × top-k: a long window's counts).
[[nodiscard]] std::vector<double> window_loads(const ExpertLoadModel& profile, std::int64_t layer,
                                               std::int64_t routed_tokens, std::int64_t interval_steps,
                                               std::int64_t microbatches);

/// The scenario's EPLB placement for these expert loads (moe.placement.eplb() only):
/// balanced_placement with redundant_experts / ep slots more per rank.
[[nodiscard]] ExpertPlacement eplb_placement(const Scenario& s, const std::vector<double>& expert_loads);

/// The scenario's EPLB placement of `layer` from the window's loads.
[[nodiscard]] ExpertPlacement eplb_placement(const Scenario& s, const ExpertLoadModel& profile, std::int64_t layer,
                                             std::int64_t routed_tokens, std::int64_t microbatches);

}  // namespace moesim::moe
