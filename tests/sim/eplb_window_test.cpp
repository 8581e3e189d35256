// Issue 30, must-show 2: EPLB placed from a profile window (the previous step's draws) and judged on
// this step's fresh draws does worse than an oracle that places from the exact popularity the draws
// are made around, and better than Megatron's contiguous placement. With a popularity that changes
// every step (per_step_variation) a window from the step before carries no information about this one.
#include <doctest/doctest.h>

#include "config/builtin_scenarios.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

namespace {
/// `redundant_per_rank` < 0: contiguous placement; `window` 0: the oracle.
double mean_imbalance(Scenario s, std::int64_t redundant_per_rank, std::int64_t window) {
  if (redundant_per_rank >= 0) {
    s.moe.placement.strategy = PlacementStrategy::kEplb;
    s.moe.placement.redundant_experts = redundant_per_rank * s.parallel.ep;
  }
  sim::SimOptions o;
  o.placement_window_microbatches = window;
  return sim::simulate_step(s, o).result.breakdown.moe_imbalance;
}
}  // namespace

TEST_CASE("EPLB from a profile window: worse than the oracle, better than contiguous") {
  Scenario s = *config::load_builtin_scenario("custom-moe-lognormal-gb200");
  REQUIRE(s.moe.routing.distribution == RoutingDistribution::kLognormal);
  // Hot experts stay hot from step to step: what a window sees is what the next step draws around.
  s.moe.routing.per_step_variation = false;
  const double contiguous = mean_imbalance(s, -1, 0);
  const double oracle = mean_imbalance(s, 1, 0);
  const double one_microbatch = mean_imbalance(s, 1, 1);
  const double window = mean_imbalance(s, 1, 16);
  MESSAGE("max/mean per EP rank: contiguous " << contiguous << ", EPLB from 1 micro-batch " << one_microbatch
                                              << ", from 16 " << window << ", oracle " << oracle);
  CHECK(oracle < window);
  CHECK(window <= one_microbatch);
  CHECK(one_microbatch < contiguous);

  // A popularity redrawn every step (the built-in scenario's own setting): the window saw another one,
  // and EPLB recovers little of the skew.
  s.moe.routing.per_step_variation = true;
  const double drifting = mean_imbalance(s, 1, 16);
  const double drifting_contiguous = mean_imbalance(s, -1, 0);
  MESSAGE("per-step popularity: contiguous " << drifting_contiguous << ", EPLB from the step before " << drifting);
  CHECK(drifting > window);
  CHECK(drifting - 1.0 > 0.5 * (drifting_contiguous - 1.0));  // recovers less than half of the excess
}
