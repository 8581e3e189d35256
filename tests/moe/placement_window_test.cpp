// moe/placement_window: the loads an EPLB balancer places from are the interval before, never the
// judged step (step 0).
#include <doctest/doctest.h>

#include <numeric>

#include "moe/placement_window.hpp"

using namespace moesim;

namespace {

moe::ExpertLoadModel drifting_lognormal() {
  RoutingSpec r;
  r.distribution = RoutingDistribution::kLognormal;
  r.lognormal_sigma = 1.0;
  r.per_step_variation = true;
  return moe::ExpertLoadModel(r, 16, 2, 7);
}

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace

TEST_CASE("the window's expectation is the mean popularity of the interval's steps, never step 0's") {
  const moe::ExpertLoadModel m = drifting_lognormal();
  const std::int64_t routed = 1000;  // tokens per micro-batch, top-2: 2,000 copies
  const std::vector<double> one = moe::window_loads(m, 0, routed, 1, 0);
  CHECK(sum(one) == doctest::Approx(2000.0));
  const std::vector<double> before = m.popularity(0, -1), now = m.popularity(0, 0), earlier = m.popularity(0, -2);
  for (std::size_t e = 0; e < one.size(); ++e) CHECK(one[e] == doctest::Approx(2000.0 * before[e]));
  CHECK(before != now);  // drawn per step: the window saw another popularity
  // Two steps: the mean of steps −1 and −2.
  const std::vector<double> two = moe::window_loads(m, 0, routed, 2, 0);
  for (std::size_t e = 0; e < two.size(); ++e) CHECK(two[e] == doctest::Approx(1000.0 * (before[e] + earlier[e])));
  // A long interval samples at most kMaxWindowSteps of its steps.
  CHECK(sum(moe::window_loads(m, 0, routed, 1'000'000, 0)) == doctest::Approx(2000.0));
}

TEST_CASE("drawn windows sum their micro-batches' copies, spread over the interval") {
  const moe::ExpertLoadModel m = drifting_lognormal();
  const std::vector<double> drawn = moe::window_loads(m, 3, 500, 4, 16);
  CHECK(sum(drawn) == doctest::Approx(16.0 * 500.0 * 2.0));
  // Deterministic: the same draws every time.
  CHECK(moe::window_loads(m, 3, 500, 4, 16) == drawn);
  // And not step 0's draws: those of the judged step differ.
  std::vector<double> judged(16, 0.0);
  for (std::int64_t mb = 0; mb < 16; ++mb) {
    const auto d = m.expert_tokens(500, 3, mb, 0);
    for (std::size_t e = 0; e < judged.size(); ++e) judged[e] += d[e];
  }
  CHECK(judged != drawn);
}

TEST_CASE("the scenario's EPLB placement holds (E + N)/ep slots per rank, from the profile when one is given") {
  Scenario s;
  s.model.num_moe_experts = 16;
  s.model.moe_router_topk = 2;
  s.parallel.ep = 4;
  s.seed = 7;
  s.moe.routing.distribution = RoutingDistribution::kLognormal;
  s.moe.routing.lognormal_sigma = 1.0;
  s.moe.placement.strategy = PlacementStrategy::kEplb;
  s.moe.placement.redundant_experts = 8;  // 2 more slots per rank
  const moe::ExpertLoadModel own = moe::placement_profile_model(s, 4);
  const moe::ExpertPlacement p = moe::eplb_placement(s, own, 0, 1000, 0);
  REQUIRE(p.ranks() == 4);
  for (const auto& slots : p.slots) CHECK(slots.size() <= 6);
  CHECK(std::accumulate(p.replicas.begin(), p.replicas.end(), std::int64_t{0}) == 24);
  // A balanced profile shows no hot expert: a different placement.
  s.moe.placement.profile = RoutingSpec{};
  const moe::ExpertLoadModel flat = moe::placement_profile_model(s, 4);
  CHECK(flat.balanced());
  CHECK_FALSE(own.balanced());
}
