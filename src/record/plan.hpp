#pragma once
// A planning question's answer (schema moesim.plan/1, docs/planner.md): what was searched, what
// fits, the ranked rows and why the winner wins. planner/ computes it, report/ writes it, config/
// reads a shard's partial answer back for `moesim merge`. The question is scenario/plan_request.hpp.
// Plain data only, like result.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "record/result.hpp"
#include "scenario/plan_request.hpp"

namespace moesim {

/// Schemas of the partial searches a plan writes and reads back (config/plan_loader, report/plan_json).
inline constexpr const char* kPlanShardSchema = "moesim.plan-shard/1";
inline constexpr const char* kPlanCheckpointSchema = "moesim.plan-checkpoint/1";

/// One point of the search space, by value (so it survives a shard file). `index` is its position in
/// the deterministic enumeration: ties in time are broken by it, so every run ranks identically.
struct Candidate {
  std::int64_t index = 0;
  std::int64_t gpus = 0, tp = 1, cp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, micro_batch_size = 1;
  std::int64_t recompute = 0;  ///< index into SearchSpace::recompute
  Precision precision = Precision::kBf16;
  Dispatcher dispatcher = Dispatcher::kAlltoall;
  std::int64_t redundant_per_rank = 0;  ///< EPLB slots per EP rank (SearchSpace::redundant_experts_per_rank)
  /// The planner offloaded activations to make the layout fit (planner::rescue_offload): the candidate
  /// did not fit without, and the scenario set no offloading of its own.
  bool offload = false;
};

/// A candidate that fits, with its fidelity-estimate figures.
struct CandidateEstimate {
  Candidate candidate;
  double step_time_s = 0;
  double peak_bytes = 0;
  std::int64_t peak_stage = 0;
};

/// Candidates turned away for one reason, with the first of them (lowest index) as the example.
struct Rejection {
  std::string reason;         ///< e.g. "out of memory on stage 0", "layout rule at /parallel/vpp"
  std::int64_t count = 0;
  Candidate example;
  std::string example_detail; ///< the full message for the example
};

/// The candidate with the smallest peak memory among those that pass every rule but memory: what an
/// infeasible plan reports.
struct SmallestFootprint {
  bool present = false;
  Candidate candidate;
  double peak_bytes = 0;
  std::int64_t peak_stage = 0;
  double capacity_bytes = 0;
};

/// What one process (or one shard, `--shard i/N`) found: the input of the final ranking.
struct SearchEvaluation {
  std::int64_t shard = 0, shards = 1;
  std::int64_t considered = 0;               ///< candidates enumerated in this shard
  std::vector<CandidateEstimate> feasible;   ///< sorted by (objective, index)
  std::vector<Rejection> rejections;         ///< sorted by the example's index
  SmallestFootprint smallest;
};

struct PlanRow {
  std::int64_t rank = 0;
  CandidateEstimate estimate;
  Result result;               ///< at fidelity simulation for finalists, else the estimate
  bool simulated = false;
  /// The same objective score as the row above at the same fidelity: a true tie, which the candidate
  /// index only orders.
  bool tied = false;
};

struct SkewSensitivity {
  std::int64_t rank = 0;
  double sigma = 0;            ///< log-normal σ of expert popularity
  double step_time_s = 0;
  double slowdown = 0;         ///< step time / balanced step time − 1
  double max_imbalance = 1;    ///< worst max/mean tokens per EP rank drawn
};

struct PrecisionAdvice {
  Precision precision = Precision::kBf16;
  bool searched = false;       ///< the request's search space included it
  bool fits = false;
  double step_time_s = 0;      ///< the winner's layout at this precision (estimate)
  double speedup = 0;          ///< winner's estimated step time / this one
  /// The fastest layout that fits at this precision (estimate), over the same space: the winner's
  /// layout may not fit (low-precision weight copies) while another does.
  bool best_present = false;
  Candidate best;
  double best_step_time_s = 0;
  double best_speedup = 0;     ///< winner's estimated step time / best_step_time_s
  std::string risk;            ///< accuracy risk and what practitioners keep in higher precision
};

struct CategoryDelta {
  std::string category;        ///< breakdown category ("compute", "ep_comm", "bubble", ...)
  double winner_s = 0, runner_up_s = 0;
};

struct ParetoPoint {
  Candidate candidate;
  double tokens_per_s = 0;
  double headroom_bytes = 0;
};

struct Plan {
  PlanRequest request;
  std::int64_t considered = 0;
  std::int64_t feasible = 0;
  std::vector<Rejection> rejections;
  std::vector<PlanRow> rows;              ///< ranked: simulated finalists first, then by estimate
  std::vector<std::string> explanation;   ///< why the winner wins, in sentences
  std::vector<CategoryDelta> vs_runner_up;
  std::vector<PrecisionAdvice> precision;
  std::vector<SkewSensitivity> skew;
  std::vector<ParetoPoint> pareto;        ///< over (tokens/s ↑, memory headroom ↑, GPUs ↓)
  std::vector<std::string> not_searched;  ///< knobs held at the base scenario's value, and why
};
}  // namespace moesim
