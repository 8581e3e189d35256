#include "schedule/step_shape.hpp"

#include <algorithm>
#include <span>
#include <vector>

#include "schedule/layout.hpp"

namespace moesim::schedule {

GroupLayout place_groups(const Scenario& s) {
  // Rank 0's groups, placed from their actual members in Megatron's rank order (dense grid
  // tp-cp-dp-pp, expert grid etp-ep-edp-pp) rather than from a stride formula.
  const Layout layout(s.parallel, s.system);
  GroupLayout g;
  g.tp = layout.placement(GroupKind::kTp, 0);
  g.cp = layout.placement(GroupKind::kCp, 0);
  g.dp = layout.placement(GroupKind::kDp, 0);
  g.etp = layout.placement(GroupKind::kEtp, 0);
  g.ep = layout.placement(GroupKind::kEp, 0);
  g.edp = layout.placement(GroupKind::kEdp, 0);
  // Pipeline traffic is send/recv between neighbouring stages: rank 0 and the next stage.
  const std::vector<std::int64_t> pp = layout.group_of(GroupKind::kPp, 0);
  const std::size_t pair = std::min<std::size_t>(pp.size(), 2);
  g.pp = place_members(std::span(pp).first(pair), s.system.nvlink_domain_size);
  return g;
}

std::int64_t rank_tokens(const Scenario& s) {
  return s.training.micro_batch_size * s.training.seq_length / s.parallel.cp;
}

bool routing_skewed(const Scenario& s) {
  return s.model.is_moe() && s.moe.routing.distribution != RoutingDistribution::kBalanced;
}

StepShape step_shape(const Scenario& s) {
  const auto& p = s.parallel;
  StepShape shape;
  shape.tokens = rank_tokens(s);
  shape.sp_tokens = p.sequence_parallel ? shape.tokens / p.tp : shape.tokens;
  // In doubles as both evaluators always priced it: activations are 16-bit, sequence-parallel-sharded over TP.
  shape.boundary_bytes = static_cast<double>(shape.tokens * s.model.hidden_size) * 2.0 /
                         (p.sequence_parallel ? static_cast<double>(p.tp) : 1.0);
  shape.microbatches = s.num_microbatches();
  shape.routing_skewed = routing_skewed(s);
  shape.simulated_ranks = p.pp * (shape.routing_skewed ? p.ep : 1);
  shape.groups = place_groups(s);
  return shape;
}

}  // namespace moesim::schedule
