#pragma once
// The search stage of a plan: every candidate of the space (or of one shard of it) is checked
// against the topology, Megatron's layout rules and the per-rank memory model, and every survivor is
// timed with the closed-form estimator. Its output is all the final ranking needs, so shards can run
// as separate processes and be merged (docs/planner.md "Large sweeps").
#include <cstdint>
#include <functional>

#include "planner/parallel_for.hpp"
#include "record/plan.hpp"

namespace moesim::planner {

struct SearchOptions {
  std::int64_t shard = 0, shards = 1;  ///< this process takes candidates whose index % shards == shard
  int threads = 0;                     ///< 0 = every hardware thread
  Progress progress;
  /// Resume a killed sweep: the search of this shard's first `resume->considered` candidates, as a
  /// checkpoint saved it. The candidates it covers are not evaluated again.
  const SearchEvaluation* resume = nullptr;
  /// Saves the search so far (sorted as a shard is; `considered` = candidates done, in enumeration
  /// order) at most every `checkpoint_every_s` seconds, and once more when stopped early.
  std::function<void(const SearchEvaluation& so_far, std::int64_t total)> checkpoint;
  double checkpoint_every_s = 30;
  /// Polled between blocks of candidates (a fraction of a second apart); true stops the search early.
  std::function<bool()> stop_requested;
};

/// A search that may have stopped early: `evaluation.considered` candidates of `total` were done.
struct SearchRun {
  SearchEvaluation evaluation;
  std::int64_t total = 0;
  [[nodiscard]] bool complete() const { return evaluation.considered == total; }
};

/// Outcome of one candidate, before aggregation (exposed for the published-layout ranking).
struct CandidateOutcome {
  bool feasible = false;
  CandidateEstimate estimate;  ///< when feasible
  std::string reason;          ///< when not: the rejection category
  std::string detail;          ///< when not: the full message
  bool memory_only = false;    ///< rejected by memory alone (it passes every other rule)
  double peak_bytes = 0;       ///< when the memory model ran
  std::int64_t peak_stage = 0;
};

/// Checks and times one candidate.
[[nodiscard]] CandidateOutcome evaluate_candidate(const PlanRequest& request, const Candidate& c);

/// `request.space` must be complete (complete_space). Candidates are evaluated in blocks, in
/// enumeration order, and folded into the result in that order, so a search resumed from any
/// checkpoint ends identical to one that never stopped.
[[nodiscard]] SearchRun run_search(const PlanRequest& request, const SearchOptions& options);

/// run_search without a stop request: always complete.
[[nodiscard]] SearchEvaluation search(const PlanRequest& request, const SearchOptions& options);

/// Higher is better: tokens/s for throughput and time-to-tokens, tokens/s per GPU for tokens per GPU-hour.
[[nodiscard]] double objective_score(const PlanRequest& request, std::int64_t gpus, double step_time_s);

}  // namespace moesim::planner
