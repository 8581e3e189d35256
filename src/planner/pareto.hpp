#pragma once
// The Pareto front of feasible candidates over (tokens/s ↑, memory headroom ↑, GPUs ↓): no point of
// the front is beaten on all three by another candidate.
#include <vector>

#include "record/plan.hpp"

namespace moesim::planner {

/// Sorted by GPUs, then tokens/s (highest first). Ties on all three keep the lowest index.
[[nodiscard]] std::vector<ParetoPoint> pareto_front(const PlanRequest& request,
                                                    const std::vector<CandidateEstimate>& feasible);

}  // namespace moesim::planner
