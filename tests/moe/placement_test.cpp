#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "moe/expert_loads.hpp"
#include "moe/placement.hpp"

using namespace moesim;

namespace {
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
}  // namespace

TEST_CASE("contiguous placement: rank j holds experts [j·E/ep, (j+1)·E/ep)") {
  const auto p = moe::contiguous_placement(8, 4);
  REQUIRE(p.ranks() == 4);
  CHECK(p.slots[1] == std::vector<std::int64_t>{2, 3});
  const std::vector<double> loads = {1, 2, 3, 4, 5, 6, 7, 8};
  CHECK(moe::placed_rank_loads(loads, p) == std::vector<double>{3, 7, 11, 15});
  CHECK(moe::placed_rank_loads(loads, p) == moe::rank_loads(loads, 4));
}

TEST_CASE("the placement optimiser reduces the max rank load on a Zipf histogram and never increases it") {
  // Zipf(1.2) popularity over 64 experts, 16 EP ranks, one redundant slot per rank.
  RoutingSpec r;
  r.distribution = RoutingDistribution::kZipf;
  r.zipf_s = 1.2;
  const moe::ExpertLoadModel model(r, 64, 4, 11);
  const std::vector<double> loads = model.expert_tokens(8192, 0, 0);
  const auto before = moe::rank_loads(loads, 16);
  for (std::int64_t redundant : {0, 1, 2}) {
    CAPTURE(redundant);
    const auto placement = moe::balanced_placement(loads, 16, redundant);
    const auto after = moe::placed_rank_loads(loads, placement);
    CHECK(sum(after) == doctest::Approx(sum(loads)).scale(0));
    CHECK(max_of(after) <= max_of(before));
    // Every rank has at most E/ep + redundant slots, each expert at most once per rank.
    for (const auto& s : placement.slots) {
      CHECK(static_cast<std::int64_t>(s.size()) <= 4 + redundant);
      CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
    }
    MESSAGE("redundant " << redundant << ": max/mean " << moe::imbalance(before) << " -> " << moe::imbalance(after));
    if (redundant == 1) CHECK(moe::imbalance(after) < 0.8 * moe::imbalance(before));
  }
  // Balanced loads: nothing to gain, nothing lost.
  const std::vector<double> even(64, 10.0);
  CHECK(max_of(moe::placed_rank_loads(even, moe::balanced_placement(even, 16, 1))) == doctest::Approx(40.0).scale(0));
}
