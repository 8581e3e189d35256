#pragma once
// A planning question (the request half of moesim.plan/1, docs/planner.md): the base scenario, the
// values each knob may take and what "best" means. config/plan_loader reads it, cli/cmd_plan builds
// it from flags, planner/ answers it (record/plan.hpp) and report/plan_json echoes it.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/named_enum.hpp"
#include "scenario/scenario.hpp"

namespace moesim {

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
  std::vector<std::int64_t> tp, cp, pp, vpp, ep, etp, micro_batch_size;
  std::vector<RecomputeSpec> recompute;
  std::vector<Precision> precision;
  std::vector<Dispatcher> dispatcher;  ///< MoE token dispatchers (only the first is used where ep = 1)
  /// EPLB redundant expert slots per EP rank (the base's moe.placement.strategy eplb; [0] with a
  /// contiguous base; only the first is used where ep = 1, which places contiguously).
  std::vector<std::int64_t> redundant_experts_per_rank;
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
  /// GiB each GPU must keep free beyond the memory model's peak for a layout to count as fitting: the
  /// model misses published runs by up to a few GiB either way (docs/memory.md), so a layout predicted
  /// to leave 0.1 GiB is a coin toss (docs/planner.md).
  double memory_headroom_gib = 2.0;
  [[nodiscard]] double memory_headroom_bytes() const { return memory_headroom_gib * 1024.0 * 1024.0 * 1024.0; }
};

[[nodiscard]] std::string_view to_string(PlanObjective o);
/// "none", "selective", "selective(moe_act,layernorm)", "full".
[[nodiscard]] std::string recompute_label(const RecomputeSpec& r);

}  // namespace moesim
