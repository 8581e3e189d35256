#pragma once
// `moesim plan`: enumerate ► prune (topology, layout rules, memory) ► rank by the closed-form
// estimate ► simulate the best K and re-rank ► explain (docs/planner.md).
#include <functional>
#include <vector>

#include "planner/parallel_for.hpp"
#include "record/plan.hpp"

namespace moesim::planner {

struct PlanOptions {
  int threads = 0;    ///< 0 = every hardware thread
  Progress progress;  ///< phases "searching", "simulating finalists", "skew sensitivity"
  /// Polled before each simulation; true throws StoppedError (the CLI reports the search's best).
  std::function<bool()> stop_requested;
};

/// Joins the search of every shard (or the single search of one process), simulates the finalists,
/// ranks and explains. `parts` must be the shards 0…N−1 of one request, each once. Throws
/// InfeasibleError when no candidate fits, with the reason and the smallest footprint.
[[nodiscard]] Plan finish_plan(const PlanRequest& request, const std::vector<SearchEvaluation>& parts,
                               const PlanOptions& options);

/// The whole plan in one process: complete_space, search, finish_plan.
[[nodiscard]] Plan make_plan(PlanRequest request, const PlanOptions& options);

/// The shards of one request merged: counts summed, feasible candidates re-sorted, rejections joined
/// (the example of each reason is the lowest-index one of any shard).
[[nodiscard]] SearchEvaluation merge_evaluations(const PlanRequest& request, const std::vector<SearchEvaluation>& parts);

}  // namespace moesim::planner
