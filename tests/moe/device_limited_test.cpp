#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "moe/device_limited.hpp"
#include "moe/expert_loads.hpp"

using namespace moesim;

namespace {
double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double max_over_mean(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end()) / (sum(v) / static_cast<double>(v.size()));
}
}  // namespace

TEST_CASE("device-limited loads: a hand-computed three-domain example") {
  // One expert per domain, masses 0.5 / 0.3 / 0.2, two domains per token. The pairs are chosen with
  // the Plackett–Luce chances P(AB) = 0.5·0.3/0.5 + 0.3·0.5/0.7, P(AC) = 0.5·0.2/0.5 + 0.2·0.5/0.8,
  // P(BC) = 0.3·0.2/0.7 + 0.2·0.3/0.8, and a chosen pair splits the pick by mass.
  const std::vector<double> p{0.5, 0.3, 0.2};
  const double ab = 0.3 + 0.15 / 0.7, ac = 0.2 + 0.1 / 0.8, bc = 0.06 / 0.7 + 0.06 / 0.8;
  CHECK(ab + ac + bc == doctest::Approx(1.0));
  const std::vector<double> q = moe::device_limited_popularity(p, 1, 2);
  REQUIRE(q.size() == 3);
  CHECK(q[0] == doctest::Approx(ab * 0.5 / 0.8 + ac * 0.5 / 0.7));
  CHECK(q[1] == doctest::Approx(ab * 0.3 / 0.8 + bc * 0.3 / 0.5));
  CHECK(q[2] == doctest::Approx(ac * 0.2 / 0.7 + bc * 0.2 / 0.5));
  CHECK(sum(q) == doctest::Approx(1.0));
  // The heavy domain gets heavier, the light one lighter.
  CHECK(q[0] > 0.5);
  CHECK(q[2] < 0.2);
}

TEST_CASE("device-limited loads: no limit, a limit of every domain, or equal masses change nothing") {
  const std::vector<double> skewed{0.1, 0.05, 0.2, 0.05, 0.3, 0.1, 0.15, 0.05};
  CHECK(moe::device_limited_popularity(skewed, 2, 0) == skewed);
  CHECK(moe::device_limited_popularity(skewed, 2, 4) == skewed);
  // Equal domain masses with uneven experts inside: each domain keeps its mass, each expert its share.
  const std::vector<double> even_domains{0.15, 0.10, 0.05, 0.20, 0.20, 0.05, 0.125, 0.125};
  CHECK(moe::device_limited_popularity(even_domains, 2, 2) == even_domains);
}

TEST_CASE("device-limited loads: DeepSeek-V3's M = 4 of 8 nodes sharpens a log-normal skew across nodes") {
  // 256 experts over 8 domains (EP64 on HGX: 8 ranks × 4 experts per domain), σ = 1.
  RoutingSpec free;
  free.distribution = RoutingDistribution::kLognormal;
  free.lognormal_sigma = 1.0;
  RoutingSpec limited = free;
  limited.device_limited_nodes = 4;
  const moe::ExpertLoadModel a(free, 256, 8, 7, 32), b(limited, 256, 8, 7, 32);
  const auto pa = a.popularity(0), pb = b.popularity(0);
  CHECK(sum(pb) == doctest::Approx(1.0));
  for (const double x : pb) CHECK(x <= 1.0 / 8 + 1e-12);
  const auto ma = moe::domain_masses(pa, 32), mb = moe::domain_masses(pb, 32);
  MESSAGE("domain max/mean: unlimited " << max_over_mean(ma) << ", M = 4 " << max_over_mean(mb));
  CHECK(max_over_mean(mb) > max_over_mean(ma));
  // Inside a domain the experts keep their relative popularity.
  CHECK(pb[1] / pb[0] == doctest::Approx(pa[1] / pa[0]));
  // The rank loads the simulation sees follow: the hottest domain's ranks carry more.
  const auto ra = moe::rank_loads(a.expert_tokens(4096 * 64, 0, 0), 64);
  const auto rb = moe::rank_loads(b.expert_tokens(4096 * 64, 0, 0), 64);
  MESSAGE("rank max/mean: unlimited " << moe::imbalance(ra) << ", M = 4 " << moe::imbalance(rb));
  CHECK(sum(rb) == doctest::Approx(sum(ra)));
}

TEST_CASE("device-limited loads: an enumeration too large to compute is refused with the rule") {
  std::vector<double> p(64, 1.0 / 64);
  p[0] *= 2;
  const double total = sum(p);
  for (double& x : p) x /= total;
  // 64 domains of one expert, M = 4: 64·63·62·61 = 15.2 million ordered choices.
  CHECK_THROWS_WITH_AS((void)moe::device_limited_popularity(p, 1, 4),
                       doctest::Contains("ordered domain choices to compute, more than 4e+06"), InputError);
  CHECK_NOTHROW((void)moe::device_limited_popularity(p, 2, 4));  // 32 domains: 863,040
}
