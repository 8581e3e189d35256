#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "moe/expected_skew.hpp"
#include "../routing_spec.hpp"

using namespace moesim;
using test::routing;

namespace {

/// The mean over `draws` micro-batches of max/mean copies per EP rank, as the simulation draws them.
double drawn_mean_imbalance(const moe::ExpertLoadModel& m, std::int64_t tokens, std::int64_t ep, int draws,
                            std::optional<double> capacity = std::nullopt) {
  double sum = 0;
  const double balanced = static_cast<double>(tokens * m.topk()) / static_cast<double>(ep);
  for (int mb = 0; mb < draws; ++mb) {
    std::vector<double> e = m.expert_tokens(tokens, 0, mb);
    if (capacity) moe::apply_capacity(e, *capacity);
    const std::vector<double> r = moe::rank_loads(e, ep);
    sum += *std::max_element(r.begin(), r.end()) / balanced;
  }
  return sum / draws;
}
}  // namespace

// E[max] of n independent standard normals: n = 2 gives 1/√π, n = 3 gives 3/(2√π) (order statistics of
// the normal; exact), n = 5 gives 1.16296 (tabulated, e.g. Harter 1961).
TEST_CASE("expected_maximum: independent normals against the exact order statistics") {
  const double pi = std::acos(-1.0);
  CHECK(moe::expected_maximum({0, 0}, {1, 1}) == doctest::Approx(1 / std::sqrt(pi)).epsilon(1e-6));
  CHECK(moe::expected_maximum({0, 0, 0}, {1, 1, 1}) == doctest::Approx(1.5 / std::sqrt(pi)).epsilon(1e-6));
  CHECK(moe::expected_maximum({0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}) == doctest::Approx(1.16296).epsilon(1e-5));
  // Location and scale carry through.
  CHECK(moe::expected_maximum({10, 10}, {2, 2}) == doctest::Approx(10 + 2 / std::sqrt(pi)).epsilon(1e-6));
  // Without noise it is the largest mean; a far lower variable changes nothing.
  CHECK(moe::expected_maximum({3, 7, 5}, {0, 0, 0}) == 7.0);
  CHECK(moe::expected_maximum({0, -100}, {1, 1}) == doctest::Approx(0.0).epsilon(1e-6));
  // A constant above every other variable's reach is the maximum.
  CHECK(moe::expected_maximum({50, 0, 0}, {0, 1, 1}) == doctest::Approx(50.0).epsilon(1e-9));
}

TEST_CASE("expected_max_rank_load: balanced routing is one, every expert at its share") {
  const moe::ExpertLoadModel m(routing(RoutingDistribution::kBalanced), 64, 8, 0);
  const auto r = moe::expected_max_rank_load(m, 0, {4096 * 8, 8, std::nullopt});
  CHECK(r.max_rank_factor == 1.0);
  CHECK(r.expert_factors == std::vector<double>(8, 1.0));
}

// The closed form against the simulation's own draws (the same popularity, the same multinomial
// streams): the mean over 300 micro-batches of the most loaded rank's copies.
TEST_CASE("expected_max_rank_load agrees with the mean drawn maximum under each distribution") {
  struct Case {
    const char* name;
    RoutingSpec routing;
    std::int64_t experts, topk, tokens, ep;
    std::optional<double> capacity;
  };
  const Case cases[] = {
      {"uniform (noise only)", routing(RoutingDistribution::kUniform), 64, 8, 2048, 8, std::nullopt},
      {"uniform, few tokens", routing(RoutingDistribution::kUniform), 64, 2, 256, 16, std::nullopt},
      {"lognormal 1.0", routing(RoutingDistribution::kLognormal, 1.0), 128, 8, 4096, 8, std::nullopt},
      {"zipf 1.0", routing(RoutingDistribution::kZipf, 1.0), 256, 8, 4096, 64, std::nullopt},
      {"dirichlet 0.5", routing(RoutingDistribution::kDirichlet, 0.5), 64, 6, 1024, 16, std::nullopt},
      {"lognormal 1.0, capacity 1.25", routing(RoutingDistribution::kLognormal, 1.0), 64, 8, 4096, 8, 1.25},
  };
  for (const Case& c : cases) {
    const std::string name = c.name;
    CAPTURE(name);
    const moe::ExpertLoadModel m(c.routing, c.experts, c.topk, 7);
    const double drawn = drawn_mean_imbalance(m, c.tokens, c.ep, 300, c.capacity);
    const auto expected = moe::expected_max_rank_load(m, 0, {c.tokens, c.ep, c.capacity});
    MESSAGE(name << ": drawn " << drawn << ", expected " << expected.max_rank_factor);
    CHECK(expected.max_rank_factor == doctest::Approx(drawn).epsilon(0.01));
    // Skew loads the hottest rank above its share; a capacity below the hot experts' loads drops their
    // copies, and the rank can then hold less than the balanced share (lognormal 1.0 at 1.25: 0.78).
    if (!c.capacity) CHECK(expected.max_rank_factor > 1.0);
    // The hottest rank's experts, scaled to carry the expected maximum.
    REQUIRE(expected.expert_factors.size() == static_cast<std::size_t>(c.experts / c.ep));
    const double held = std::accumulate(expected.expert_factors.begin(), expected.expert_factors.end(), 0.0);
    CHECK(held / static_cast<double>(c.experts / c.ep) == doctest::Approx(expected.max_rank_factor).epsilon(1e-9));
  }
}

TEST_CASE("expected_max_rank_load: a measured histogram is exact, with no noise around it") {
  RoutingSpec r = routing(RoutingDistribution::kHistogram);
  auto h = std::make_shared<RoutingHistogram>();
  h->file = "test";
  h->experts = 8;
  h->tokens = {{{4, 1, 1, 1, 1, 1, 1, 2}}};  // one step, one MoE layer
  h->moe_layer_of = {0};
  r.histogram = h;
  const moe::ExpertLoadModel m(r, 8, 1, 0);
  // 4 ranks of 2 experts: shares (5, 2, 2, 3) / 12; the hottest holds 5/12 against 3/12 balanced.
  const auto e = moe::expected_max_rank_load(m, 0, {1200, 4, std::nullopt});
  CHECK(e.max_rank_factor == doctest::Approx(5.0 / 3.0).epsilon(1e-12));
  CHECK(e.expert_factors[0] == doctest::Approx(4.0 * 8 / 12).epsilon(1e-12));
  CHECK(e.expert_factors[1] == doctest::Approx(1.0 * 8 / 12).epsilon(1e-12));
}
