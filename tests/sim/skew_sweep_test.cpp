// sim/skew_sweep: `moesim skew`'s range parsing, the routing each value sets, and the sweep itself.
#include <doctest/doctest.h>

#include <vector>

#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "sim/skew_sweep.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

TEST_CASE("a skew range: PARAM=FROM:TO:STEP, inclusive of TO, strictly checked") {
  const auto r = sim::parse_skew_range("sigma=0:1.5:0.5");
  CHECK(r.parameter == "sigma");
  REQUIRE(r.values.size() == 4);
  CHECK(r.values.back() == doctest::Approx(1.5));
  CHECK(sim::parse_skew_range("s=0.3:0.3:1").values == std::vector<double>{0.3});
  CHECK(sim::parse_skew_range("alpha=1:2:1").values.size() == 2);
  for (const char* bad : {"sigma", "tau=0:1:0.5", "sigma=1:0:0.5", "sigma=0:1:0", "sigma=-1:1:0.5", "sigma=0:1:0.001",
                          "sigma=0:1:0.5x", "sigma=0:inf:1"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS((void)sim::parse_skew_range(bad), InputError);
  }
}

TEST_CASE("with_skew sets the parameter's distribution; 0 is balanced") {
  Scenario s;
  CHECK(sim::with_skew(s, "sigma", 0).moe.routing.distribution == RoutingDistribution::kBalanced);
  const Scenario lognormal = sim::with_skew(s, "sigma", 0.5);
  CHECK(lognormal.moe.routing.distribution == RoutingDistribution::kLognormal);
  CHECK(lognormal.moe.routing.lognormal_sigma == 0.5);
  const Scenario zipf = sim::with_skew(s, "s", 1.2);
  CHECK(zipf.moe.routing.distribution == RoutingDistribution::kZipf);
  CHECK(zipf.moe.routing.zipf_s == 1.2);
  const Scenario dirichlet = sim::with_skew(s, "alpha", 0.3);
  CHECK(dirichlet.moe.routing.distribution == RoutingDistribution::kDirichlet);
  CHECK(dirichlet.moe.routing.dirichlet_alpha == 0.3);
}

TEST_CASE("sweep_skew: balanced first, each point with and without the placement, reported as it is done") {
  // The GPU side of skew and placement: with its Grace host priced, this eager GB200 MoE step is
  // host-bound and no placement shows; a full-iteration graph takes the host out.
  Scenario base = *config::load_builtin_scenario("custom-moe-lognormal-gb200");
  base.runtime.cuda_graph = {CudaGraphScope::kFullIteration};
  std::vector<double> seen;
  const SkewSweep sw = sim::sweep_skew(base, sim::parse_skew_range("sigma=0:1:1"), 2,
                                       [&](const SkewPoint& p) { seen.push_back(p.value); });
  CHECK(seen == std::vector<double>{0.0, 1.0});
  CHECK(sw.scenario == base.name);
  CHECK(sw.parameter == "sigma");
  CHECK(sw.redundant_experts_per_rank == 2);
  CHECK(sw.balanced_step_time_s == sim::simulate_step(sim::with_skew(base, "sigma", 0)).result.step_time_s);
  REQUIRE(sw.points.size() == 2);
  CHECK(sw.points[0].penalty == 0.0);
  CHECK(sw.points[0].recovered == 0.0);
  const SkewPoint& p = sw.points[1];
  CHECK(p.step_time_s == sim::simulate_step(sim::with_skew(base, "sigma", 1)).result.step_time_s);
  CHECK(p.penalty == doctest::Approx(p.step_time_s / sw.balanced_step_time_s - 1.0));
  CHECK(p.mean_imbalance > 1.0);
  CHECK(p.eplb_step_time_s <= p.step_time_s);
  CHECK(p.recovered == doctest::Approx((p.penalty - p.eplb_penalty) / p.penalty));
}
