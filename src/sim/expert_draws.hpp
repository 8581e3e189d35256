#pragma once
// How the simulation draws a scenario's expert loads, for whoever must run the very loads it priced
// (validate/workload: the proxy runner's routed copies). StepSimulation builds its ExpertLoadModel
// and its token counts with these, so the two cannot drift apart.
#include <cstdint>

#include "moe/expert_loads.hpp"
#include "scenario/scenario.hpp"

namespace moesim::sim {

/// The expert-load model the simulation draws from: the scenario's routing, experts, top-k and seed,
/// and the experts on one NVLink domain's EP ranks (device-limited routing), `ep_ranks_per_domain`
/// being the EP group's members per domain. Draw (layer, micro-batch) of step 0 is
/// `expert_tokens(sp_tokens × ep, layer, microbatch)`, `sp_tokens` being the tokens each EP rank routes
/// per micro-batch and MoE layer (schedule::StepShape) (model layer indices).
[[nodiscard]] moe::ExpertLoadModel expert_load_model(const Scenario& s, std::int64_t ep_ranks_per_domain);

}  // namespace moesim::sim
