#include "program/ragged_expert_cost.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace moesim::program {
namespace {

compute::GemmPart gemm_part_of(OpPhase phase) {
  switch (phase) {
    case OpPhase::kDgrad: return compute::GemmPart::kDgrad;
    case OpPhase::kWgrad: return compute::GemmPart::kWgrad;
    case OpPhase::kForward:
    case OpPhase::kBackward:
    case OpPhase::kRecompute: break;
  }
  return compute::GemmPart::kForward;
}

}  // namespace

bool follows_expert_load(const LayerOp& op, Dispatcher dispatcher) {
  if (op.kind == OpKind::kCompute) return std::string_view(op.name).starts_with("expert_");
  return op.group == CommGroup::kEp && dispatcher != Dispatcher::kAllgather;
}

double RaggedExpertCost::seconds(const LayerOp& op, std::span<const double> expert_factors, double rank_factor) {
  if (op.local_experts <= 0) return op.seconds * rank_factor;
  const compute::GemmPart part = gemm_part_of(op.phase);
  // The estimator costed the balanced group (local_experts × grouped_m copies); what the op holds
  // beyond that GEMM (the FP8 casts of its operands) is memory-bound and follows the rank's load.
  // Both are re-costed at the kernels' predicted speed, then sped up as the op was (whatif).
  const double rest = std::max(0.0, op.seconds * op.speedup - balanced_grouped_seconds(op, part));
  tokens_.clear();
  for (const double f : expert_factors) tokens_.push_back(std::llround(static_cast<double>(op.grouped_m) * f));
  const double ragged =
      compute::grouped_gemm(kernels_, {tokens_, op.grouped_n, op.grouped_k, part}, op.grouped_precision).value();
  return (ragged + rest * rank_factor) / op.speedup;
}

double RaggedExpertCost::balanced_grouped_seconds(const LayerOp& op, compute::GemmPart part) {
  for (const BalancedGrouped& b : balanced_) {
    if (b.m == op.grouped_m && b.n == op.grouped_n && b.k == op.grouped_k && b.experts == op.local_experts &&
        b.part == part && b.precision == op.grouped_precision) {
      return b.seconds;
    }
  }
  tokens_.assign(static_cast<std::size_t>(op.local_experts), op.grouped_m);
  const double seconds =
      compute::grouped_gemm(kernels_, {tokens_, op.grouped_n, op.grouped_k, part}, op.grouped_precision).value();
  balanced_.push_back({op.grouped_m, op.grouped_n, op.grouped_k, op.local_experts, part, op.grouped_precision, seconds});
  return seconds;
}

OpProgram on_expected_rank(const OpProgram& ops, const moe::ExpectedRankLoad& load, Dispatcher dispatcher,
                           RaggedExpertCost& cost) {
  OpProgram out = ops;
  for (std::vector<LayerOp>* pass : {&out.forward, &out.backward}) {
    for (LayerOp& op : *pass) {
      if (follows_expert_load(op, dispatcher)) op.seconds = cost.seconds(op, load.expert_factors, load.max_rank_factor);
    }
  }
  return out;
}

}  // namespace moesim::program
