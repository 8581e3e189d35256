#pragma once
// A planning question and its answer (schema moesim.plan/1, docs/planner.md). planner/ computes
// them, report/ writes them, config/ reads a shard's partial answer back for `moesim merge`. Plain
// data only, like result.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "core/named_enum.hpp"
#include "scenario/result.hpp"

namespace moesim {

/// Schemas of the partial searches a plan writes and reads back (config/plan_loader, report/plan_json).
inline constexpr const char* kPlanShardSchema = "moesim.plan-shard/1";
inline constexpr const char* kPlanCheckpointSchema = "moesim.plan-checkpoint/1";


/// What "best" means. For one GPU count the three order layouts identically (they are all tokens per
/// second for a fixed cluster); they differ when the GPU count is searched too.
enum class PlanObjective { kThroughput, kTokensPerGpuHour, kTimeToTokens };
inline constexpr auto kPlanObjectiveNames = std::to_array<EnumName<PlanObjective>>(
    {{PlanObjective::kThroughput, "throughput"}, {PlanObjective::kTokensPerGpuHour, "tokens-per-gpu-hour"},
     {PlanObjective::kTimeToTokens, "time-to-tokens"}});

/// The values each knob may take. planner::complete_space fills every empty list with the planner's
/// default range for the model and cluster, so a request echoes exactly what was searched.
struct SearchSpace {
  std::vector<std::int64_t> gpus;  ///< cluster sizes (one, or a range for a Pareto front)
  std::vector<std::int64_t> tp, cp, pp, vpp, ep, etp, micro_batch;
  std::vector<RecomputeSpec> recompute;
  std::vector<Precision> precision;
  std::vector<Dispatcher> dispatcher;  ///< MoE token dispatchers (only the first is used where ep = 1)
};

struct PlanRequest {
  /// Model, system, training (seq_length, global_batch_size), moe, optimizer, attention backend and
  /// seed of every candidate. Its parallel layout, micro-batch, recompute and precision are ignored:
  /// those come from the search space.
  Scenario base;
  SearchSpace space;
  PlanObjective objective = PlanObjective::kThroughput;
  double token_budget = 0;         ///< tokens to train, for kTimeToTokens (reported for every objective when > 0)
  std::int64_t top = 10;           ///< rows of the ranked table
  std::int64_t finalists = 8;      ///< best candidates by estimate that are simulated and re-ranked (K)
  bool skew_sensitivity = true;    ///< re-simulate the top 3 at log-normal σ = 0.5 and 1.0 (MoE models)
};

/// One point of the search space, by value (so it survives a shard file). `index` is its position in
/// the deterministic enumeration: ties in time are broken by it, so every run ranks identically.
struct Candidate {
  std::int64_t index = 0;
  std::int64_t gpus = 0, tp = 1, cp = 1, pp = 1, vpp = 1, ep = 1, etp = 1, micro_batch = 1;
  std::int64_t recompute = 0;  ///< index into SearchSpace::recompute
  Precision precision = Precision::kBf16;
  Dispatcher dispatcher = Dispatcher::kAlltoall;
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

[[nodiscard]] std::string_view to_string(PlanObjective o);
/// "none", "selective", "selective(moe_act,layernorm)", "full".
[[nodiscard]] std::string recompute_label(const RecomputeSpec& r);

}  // namespace moesim
