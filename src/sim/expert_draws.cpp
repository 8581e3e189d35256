#include "sim/expert_draws.hpp"

#include <algorithm>

#include "program/layer_cost.hpp"

namespace moesim::sim {

std::int64_t routed_tokens_per_rank(const Scenario& s) {
  const auto& p = s.parallel;
  return s.training.micro_batch_size * s.training.seq_length / p.cp / (p.sequence_parallel ? p.tp : 1);
}

moe::ExpertLoadModel expert_load_model(const Scenario& s, std::int64_t ep_ranks_per_domain) {
  return moe::ExpertLoadModel(s.moe.routing, std::max<std::int64_t>(s.model.num_moe_experts, 1),
                              std::max<std::int64_t>(s.model.moe_router_topk, 1), s.seed,
                              s.model.num_moe_experts / std::max<std::int64_t>(s.parallel.ep, 1) *
                                  ep_ranks_per_domain);
}

moe::ExpertLoadModel expert_load_model(const Scenario& s) {
  return expert_load_model(s, program::place_groups(s).ep.per_domain);
}

}  // namespace moesim::sim
