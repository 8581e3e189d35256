#pragma once
// The planner's search space: default value lists per knob for a model and cluster, the
// deterministic enumeration of candidates, and the scenario each candidate stands for.
#include <string>
#include <vector>

#include "record/plan.hpp"

namespace moesim::planner {

/// Fills every empty list of request.space with the default range for the model and cluster
/// (docs/planner.md "Search space"); lists already given are kept as constraints, sorted, deduplicated.
void complete_space(PlanRequest& request);

/// Every combination of the space in a fixed order (gpus, precision, pp, vpp, tp, cp, ep, dispatcher,
/// redundant experts, etp, micro-batch, recompute), minus the combinations the planner never proposes: expert TP other than 1
/// or the attention TP, vpp > 1 without pp > 1, a second dispatcher or redundant count where ep = 1, more
/// redundant experts per rank than E − E/ep, and vpp values whose chunks would split the layers
/// neither evenly, nor evenly with the embedding and loss counted as layers, nor as a power of two.
/// Each candidate's `index` is its position in this list.
[[nodiscard]] std::vector<Candidate> enumerate_candidates(const PlanRequest& request);

/// The scenario a candidate stands for: the base with the candidate's layout, micro-batch, recompute
/// and precision; dp derived; sequence parallelism on when tp > 1; Megatron's embedding/loss pipeline
/// slots when they make pp·vpp divide the layers and nothing else does.
[[nodiscard]] Scenario scenario_for(const PlanRequest& request, const Candidate& c);

/// "TP2 PP8 VPP4 EP64 · mbs 1 · selective · bf16" (with CP, ETP, DP and the GPU count when they
/// matter). Stable text: used in messages, tables and tests.
[[nodiscard]] std::string describe(const PlanRequest& request, const Candidate& c);

}  // namespace moesim::planner
