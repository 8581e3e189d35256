#pragma once
// How the simulation draws a scenario's expert loads, for whoever must run the very loads it priced
// (validate/workload: the proxy runner's routed copies). StepSimulation builds its ExpertLoadModel
// and its token counts with these, so the two cannot drift apart.
#include <cstdint>

#include "moe/expert_loads.hpp"
#include "scenario/scenario.hpp"

namespace moesim::sim {

/// Tokens each EP rank routes per micro-batch and MoE layer: its sequence-parallel slice of the
/// micro-batch, micro_batch × seq / cp (/ tp with sequence parallelism).
[[nodiscard]] std::int64_t routed_tokens_per_rank(const Scenario& s);

/// The expert-load model the simulation draws from: the scenario's routing, experts, top-k and seed,
/// and the experts on one NVLink domain's EP ranks (device-limited routing), `ep_ranks_per_domain`
/// being the EP group's members per domain. Draw (layer, micro-batch) of step 0 is
/// `expert_tokens(routed_tokens_per_rank(s) × ep, layer, microbatch)` (model layer indices).
[[nodiscard]] moe::ExpertLoadModel expert_load_model(const Scenario& s, std::int64_t ep_ranks_per_domain);
/// The same, with the EP group placed on the system as the cost model places it.
[[nodiscard]] moe::ExpertLoadModel expert_load_model(const Scenario& s);

}  // namespace moesim::sim
