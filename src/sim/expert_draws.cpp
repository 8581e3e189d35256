#include "sim/expert_draws.hpp"

#include <algorithm>

namespace moesim::sim {

moe::ExpertLoadModel expert_load_model(const Scenario& s, std::int64_t ep_ranks_per_domain) {
  return moe::ExpertLoadModel(s.moe.routing, std::max<std::int64_t>(s.model.num_moe_experts, 1),
                              std::max<std::int64_t>(s.model.moe_router_topk, 1), s.seed,
                              s.model.num_moe_experts / std::max<std::int64_t>(s.parallel.ep, 1) *
                                  ep_ranks_per_domain);
}

}  // namespace moesim::sim
