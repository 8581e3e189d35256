#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "moe/expert_loads.hpp"
#include "../routing_spec.hpp"

using namespace moesim;
using test::routing;

namespace {
double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
}  // namespace

TEST_CASE("balanced routing: every expert and every EP rank gets exactly its share") {
  const moe::ExpertLoadModel m(routing(RoutingDistribution::kBalanced), 64, 6, 0);
  const auto e = m.expert_tokens(4096, 3, 7);
  CHECK(sum(e) == doctest::Approx(4096.0 * 6).scale(0));
  const auto r = moe::rank_loads(e, 8);
  CHECK(moe::imbalance(r) == 1.0);
}

TEST_CASE("uniform routing: rank loads vary as the multinomial says") {
  // 8 EP ranks, each receiving a copy with probability q = 1/8; N = 16384·8 copies. The variance of
  // a rank's load is N·q·(1 − q) (multinomial marginal); check it within sampling error over draws.
  const std::int64_t tokens = 16384, k = 8, ep = 8;
  const moe::ExpertLoadModel m(routing(RoutingDistribution::kUniform), 64, k, 42);
  const double n = static_cast<double>(tokens * k), q = 1.0 / static_cast<double>(ep);
  double sq = 0;
  int samples = 0;
  for (int mb = 0; mb < 200; ++mb) {
    const auto e = m.expert_tokens(tokens, 0, mb);
    CHECK(sum(e) == doctest::Approx(n).scale(0));
    for (double load : moe::rank_loads(e, ep)) {
      sq += (load - n * q) * (load - n * q);
      ++samples;
    }
  }
  const double variance = sq / samples, expected = n * q * (1 - q);
  MESSAGE("rank-load variance " << variance << " vs multinomial " << expected);
  // 1,600 samples: the variance estimate's relative standard error is about sqrt(2/1600) = 3.5 %.
  CHECK(variance == doctest::Approx(expected).epsilon(0.12).scale(0));
}

TEST_CASE("popularity: sums to one, no expert above 1/topk, skew grows with sigma for a fixed seed") {
  double previous = 0;
  for (double sigma : {0.0, 0.25, 0.5, 1.0, 1.5}) {
    const moe::ExpertLoadModel m(routing(RoutingDistribution::kLognormal, sigma), 256, 8, 7);
    const auto p = m.popularity(0);
    CHECK(sum(p) == doctest::Approx(1.0).scale(0));
    double top = 0;
    for (double x : p) {
      CHECK(x <= 1.0 / 8 + 1e-12);
      top = std::max(top, x);
    }
    CHECK(top >= previous);
    previous = top;
  }
  const moe::ExpertLoadModel z(routing(RoutingDistribution::kZipf, 2.0), 16, 4, 1);  // top weight 0.63 uncapped
  const auto p = z.popularity(0);
  CHECK(*std::max_element(p.begin(), p.end()) == doctest::Approx(0.25).scale(0));  // capped at 1/topk
  const moe::ExpertLoadModel d(routing(RoutingDistribution::kDirichlet, 0.3), 32, 4, 1);
  CHECK(sum(d.popularity(5)) == doctest::Approx(1.0).scale(0));
}

TEST_CASE("capacity factor 1.0 caps every expert at its balanced share and reports the drops") {
  std::vector<double> e = {100, 20, 40, 40};  // mean 50
  const double dropped = moe::apply_capacity(e, 1.0);
  CHECK(e[0] == 50);
  CHECK(e[1] == 20);
  CHECK(dropped == doctest::Approx(50.0 / 200.0).scale(0));
  std::vector<double> none = {50, 50};
  CHECK(moe::apply_capacity(none, 1.0) == 0.0);
}

TEST_CASE("padded to capacity every expert holds exactly its capacity, with the same drops") {
  std::vector<double> e = {100, 20, 40, 40};  // mean 50, capacity 1.25 × 50 = 62.5
  const double dropped = moe::apply_capacity(e, 1.25, true);
  for (const double t : e) CHECK(t == doctest::Approx(62.5));
  CHECK(dropped == doctest::Approx(37.5 / 200.0));
  std::vector<double> unpadded = {100, 20, 40, 40};
  CHECK(moe::apply_capacity(unpadded, 1.25) == doctest::Approx(dropped));
  CHECK(unpadded[1] == 20);
}

TEST_CASE("the same seed gives the same draws; another seed other draws") {
  const moe::ExpertLoadModel a(routing(RoutingDistribution::kLognormal, 1.0), 64, 8, 3);
  const moe::ExpertLoadModel b(routing(RoutingDistribution::kLognormal, 1.0), 64, 8, 3);
  const moe::ExpertLoadModel c(routing(RoutingDistribution::kLognormal, 1.0), 64, 8, 4);
  CHECK(a.expert_tokens(2048, 1, 2) == b.expert_tokens(2048, 1, 2));
  CHECK(a.expert_tokens(2048, 1, 2) != c.expert_tokens(2048, 1, 2));
}
