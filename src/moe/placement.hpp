#pragma once
// Where the experts live: Megatron's contiguous default (EP rank j holds experts [j·E/ep, (j+1)·E/ep)),
// and an EPLB-style placement (DeepSeek's expert-parallel load balancer) that, given measured or drawn
// expert loads and a budget of redundant expert slots per rank, replicates the hottest experts and
// places every replica so that the most loaded EP rank carries as little as possible.
#include <cstdint>
#include <vector>

namespace moesim::moe {

struct ExpertPlacement {
  /// slots[j]: the experts whose replicas sit on EP rank j (each expert at most once per rank).
  std::vector<std::vector<std::int64_t>> slots;
  /// replicas[e]: how many ranks hold expert e (1 without replication); a replicated expert's
  /// tokens split evenly over its replicas.
  std::vector<std::int64_t> replicas;
  [[nodiscard]] std::int64_t ranks() const { return static_cast<std::int64_t>(slots.size()); }
};

/// The contiguous default.
[[nodiscard]] ExpertPlacement contiguous_placement(std::int64_t experts, std::int64_t ep);

/// EPLB-style: E/ep + `redundant_per_rank` slots per rank. The ep·redundant_per_rank extra replicas go
/// one at a time to the expert with the largest load per replica; replicas are then placed largest
/// first on the least-loaded rank that has a free slot and does not hold that expert yet. The result
/// is never worse than the contiguous placement for these loads (if the greedy one were, the
/// contiguous one is returned), so the optimiser never increases the max rank load.
[[nodiscard]] ExpertPlacement balanced_placement(const std::vector<double>& expert_loads, std::int64_t ep,
                                                 std::int64_t redundant_per_rank);

/// Tokens each EP rank computes under a placement.
[[nodiscard]] std::vector<double> placed_rank_loads(const std::vector<double>& expert_loads,
                                                    const ExpertPlacement& placement);

}  // namespace moesim::moe
