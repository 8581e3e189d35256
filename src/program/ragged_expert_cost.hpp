#pragma once
// The expert ops of one EP rank under routing skew, priced the same way by both fidelities: which ops
// follow the copies routed to the rank, and a grouped expert GEMM re-costed over the rank's ragged
// per-expert loads. The simulation applies it to each drawn (layer, micro-batch); the estimate to the
// expected most loaded rank of each layer (moe/expected_skew.hpp).
#include <cstdint>
#include <span>
#include <vector>

#include "compute/grouped_gemm.hpp"
#include "compute/kernel_cost.hpp"
#include "moe/expected_skew.hpp"
#include "program/layer_cost.hpp"

namespace moesim::program {

/// Whether an op's work follows the copies routed to its EP rank: the expert kernels run on them, the
/// all-to-all dispatch and combine move them. The allgather dispatcher's all-gather and reduce-scatter
/// move every token of the EP group whatever the routing, so their bytes do not follow the load (they
/// still wait for every rank).
[[nodiscard]] bool follows_expert_load(const LayerOp& op, Dispatcher dispatcher);

class RaggedExpertCost {
 public:
  explicit RaggedExpertCost(const compute::KernelCostModel& kernels) : kernels_(kernels) {}

  /// An op that follows the load, on a rank whose copies are `rank_factor` × the balanced share and
  /// whose experts hold `expert_factors` × the balanced share each: a grouped expert GEMM (an op with
  /// local_experts > 0) re-costed over those per-expert rows (compute/grouped_gemm), whatever else its
  /// time holds (the FP8 casts of its operands, memory-bound) scaled with the rank's load; any other
  /// op scaled with the rank's load.
  [[nodiscard]] double seconds(const LayerOp& op, std::span<const double> expert_factors, double rank_factor);

 private:
  /// grouped_gemm over the op's balanced group (local_experts × grouped_m), computed once per kind.
  double balanced_grouped_seconds(const LayerOp& op, compute::GemmPart part);

  const compute::KernelCostModel& kernels_;
  std::vector<std::int64_t> tokens_;  ///< scratch for the per-expert rows
  /// The balanced grouped time of each expert GEMM kind (a handful: fc1/fc2 × part), by its problem.
  struct BalancedGrouped {
    std::int64_t m, n, k, experts;
    compute::GemmPart part;
    Precision precision;
    double seconds;
  };
  std::vector<BalancedGrouped> balanced_;
};

/// A layer's op program on the expected most loaded EP rank: every op that follows the load priced at
/// `load` (RaggedExpertCost), the rest as they are.
[[nodiscard]] OpProgram on_expected_rank(const OpProgram& ops, const moe::ExpectedRankLoad& load,
                                         Dispatcher dispatcher, RaggedExpertCost& cost);

}  // namespace moesim::program
