#pragma once
// What fidelity `estimate` prices under routing skew: the expected most loaded EP rank of one MoE
// layer. The simulation draws each (layer, micro-batch) multinomially around the scenario's
// popularity (expert_loads.hpp) and every EP rank waits at the all-to-all for the most loaded one;
// the estimate takes the same popularity (same seed, same streams) and the expectation of that
// maximum in closed form, so a planner can rank layouts under skew at the estimate's speed.
#include <cstdint>
#include <optional>
#include <vector>

#include "moe/expert_loads.hpp"
#include "moe/placement.hpp"

namespace moesim::moe {

struct ExpectedRankLoad {
  /// E[max over EP ranks of the copies a rank receives] / the balanced copies per rank (1 = balanced).
  double max_rank_factor = 1.0;
  /// The expected hottest rank's experts, in its order: expected copies / the balanced copies per
  /// expert, scaled so that they sum to max_rank_factor × the experts per rank (the rank that wins
  /// the maximum carries the noise as well as its popularity).
  std::vector<double> expert_factors;
};

/// The routing a layer's draws share: the model of the scenario's loads and how a draw is capped.
struct SkewQuery {
  std::int64_t routed_tokens = 0;  ///< tokens the EP group routes per (layer, micro-batch): ep × sp tokens
  std::int64_t ep = 1;
  std::optional<double> capacity_factor;  ///< Megatron's drop policy (no padding: padding removes skew)
  /// An EPLB placement (moe/placement_window: computed from a window, not from this step's loads);
  /// nullptr: Megatron's contiguous one. A replicated expert's copies split evenly over its replicas.
  const ExpertPlacement* placement = nullptr;
};

/// The expectation for `layer` (model layer index, MTP layers after them; step 0). Each expert's
/// copies are Normal(T·p_e, T·p_e(1 − p_e)) — the multinomial's marginals, T = routed tokens × top-k;
/// a measured histogram gives its shares exactly, no noise — capped at the capacity in expectation;
/// a rank sums its contiguous experts, or under a placement each slot's share of its expert (their
/// small negative covariances left out), and the expected
/// maximum over ranks is integrated numerically: E[max] = L + ∫_L^∞ (1 − Π_j Φ((x − μ_j)/σ_j)) dx.
[[nodiscard]] ExpectedRankLoad expected_max_rank_load(const ExpertLoadModel& loads, std::int64_t layer,
                                                      const SkewQuery& q);

/// E[max_j X_j] for independent X_j ~ Normal(mean[j], sd[j]²) (sd 0: the constant mean[j]).
[[nodiscard]] double expected_maximum(const std::vector<double>& mean, const std::vector<double>& sd);

}  // namespace moesim::moe
