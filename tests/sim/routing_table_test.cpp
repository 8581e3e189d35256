// The result's per-layer × per-expert load table (routing.layers): one row per MoE layer the
// simulated ranks route, loads relative to the balanced share, consistent with the summary figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "config/builtin_scenarios.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

TEST_CASE("routing.layers: every MoE layer, loads averaging 1 without drops, worst imbalance consistent") {
  const Scenario s = *config::load_builtin_scenario("custom-moe-lognormal-gb200");
  const Result r = sim::simulate_step(s).result;
  REQUIRE(r.routing.present);
  REQUIRE_FALSE(r.routing.layers.empty());
  CHECK(static_cast<std::int64_t>(r.routing.layers.size()) == s.model.num_moe_layers());
  double worst = 1.0;
  for (const auto& l : r.routing.layers) {
    CAPTURE(l.layer);
    CHECK(s.model.layer_is_moe(l.layer));
    REQUIRE(static_cast<std::int64_t>(l.expert_load.size()) == s.model.num_moe_experts);
    const double mean = std::accumulate(l.expert_load.begin(), l.expert_load.end(), 0.0) / static_cast<double>(l.expert_load.size());
    CHECK(mean == doctest::Approx(1.0).epsilon(1e-9).scale(0));  // dropless: every copy lands somewhere
    // Skewed popularity: some expert well above and some well below its balanced share.
    CHECK(*std::max_element(l.expert_load.begin(), l.expert_load.end()) > 1.2);
    CHECK(*std::min_element(l.expert_load.begin(), l.expert_load.end()) < 0.8);
    CHECK(l.max_rank_imbalance >= 1.0);
    worst = std::max(worst, l.max_rank_imbalance);
  }
  CHECK(worst == r.routing.max_imbalance);
}
