// Expert loads from a measured routing histogram: exact measured shares per MoE layer, steps
// cycled, the 1/topk cap, and model layer → MoE layer through the layer pattern (MTP reuses the last).
#include <doctest/doctest.h>

#include <memory>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "moe/expert_loads.hpp"

using namespace moesim;

namespace {

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

/// Model layers 0..4 with layer 2 dense: MoE layers are model layers 0, 1, 3, 4. 4 experts.
RoutingSpec histogram_routing(std::vector<std::vector<std::vector<double>>> tokens) {
  auto h = std::make_shared<RoutingHistogram>();
  h->file = "h.csv";
  h->experts = 4;
  h->tokens = std::move(tokens);
  h->moe_layer_of = {0, 1, -1, 2, 3};
  RoutingSpec r;
  r.distribution = RoutingDistribution::kHistogram;
  r.histogram_file = "h.csv";
  r.histogram = std::move(h);
  return r;
}

const std::vector<std::vector<double>> kStep0 = {{1, 1, 1, 1}, {4, 2, 1, 1}, {0, 1, 1, 2}, {3, 3, 1, 1}};
const std::vector<std::vector<double>> kStep1 = {{2, 2, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};

void check_shares(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (want[i] == 0.0) {
      CHECK(got[i] == 0.0);  // a relative Approx never matches 0
    } else {
      CHECK(got[i] == doctest::Approx(want[i]).scale(0));
    }
  }
}

}  // namespace

TEST_CASE("histogram routing: each MoE layer's popularity is its measured shares") {
  const moe::ExpertLoadModel m(histogram_routing({kStep0}), 4, 2, 0);
  CHECK_FALSE(m.balanced());
  check_shares(m.popularity(0), {0.25, 0.25, 0.25, 0.25});
  check_shares(m.popularity(1), {0.5, 0.25, 0.125, 0.125});  // at the 1/topk cap, not above it
  check_shares(m.popularity(3), {0.0, 0.25, 0.25, 0.5});     // model layer 3 is MoE layer 2
  check_shares(m.popularity(4), {0.375, 0.375, 0.125, 0.125});
  check_shares(m.popularity(5), m.popularity(4));         // an MTP layer reuses the last MoE layer
  CHECK_THROWS_AS((void)m.popularity(2), InternalError);  // dense: the simulation never asks
}

TEST_CASE("histogram routing: a micro-batch gets the measured shares exactly, with no noise") {
  const moe::ExpertLoadModel m(histogram_routing({kStep0}), 4, 2, 7);
  const std::vector<double> e = m.expert_tokens(1000, 1, 0);
  check_shares(e, {1000, 500, 250, 250});
  CHECK(sum(e) == doctest::Approx(2000.0).scale(0));
  CHECK(m.expert_tokens(1000, 1, 5) == e);  // every micro-batch alike; the seed plays no part
  const moe::ExpertLoadModel other_seed(histogram_routing({kStep0}), 4, 2, 99);
  CHECK(other_seed.expert_tokens(1000, 1, 0) == e);
  // Per EP rank (2 ranks of 2 experts): 1500 vs 500 → max/mean 1.5.
  CHECK(moe::imbalance(moe::rank_loads(e, 2)) == doctest::Approx(1.5).scale(0));
}

TEST_CASE("histogram routing: measured steps are cycled over") {
  const moe::ExpertLoadModel m(histogram_routing({kStep0, kStep1}), 4, 2, 0);
  check_shares(m.popularity(0, 0), {0.25, 0.25, 0.25, 0.25});
  check_shares(m.popularity(0, 1), {0.5, 0.5, 0, 0});
  check_shares(m.popularity(0, 2), m.popularity(0, 0));
  check_shares(m.popularity(0, 3), m.popularity(0, 1));
  check_shares(m.expert_tokens(10, 0, 0, 1), {10, 10, 0, 0});
}

TEST_CASE("histogram routing: shares above 1/topk are capped and the rest spread") {
  // Counts from a top-1 router read by a top-2 model: expert 0 measured 70 %, more than a token can give.
  const std::vector<std::vector<double>> top1 = {{7, 3, 0, 0}, {1, 0, 0, 0}, {1, 1, 1, 1}, {1, 1, 1, 1}};
  const moe::ExpertLoadModel m(histogram_routing({top1}), 4, 2, 0);
  check_shares(m.popularity(0), {0.5, 0.5, 0, 0});  // water-filled: the 20 % over the cap goes to expert 1
  // Only one expert measured anything: the half it cannot take is spread over the other three.
  check_shares(m.popularity(1), {0.5, 1.0 / 6, 1.0 / 6, 1.0 / 6});
  const std::vector<double> e = m.expert_tokens(600, 1, 0);
  CHECK(sum(e) == doctest::Approx(1200.0).scale(0));
  for (double x : e) CHECK(x <= 600.0 + 1e-9);  // no expert above the micro-batch's tokens
}

TEST_CASE("histogram routing without a loaded histogram, or for another expert count, is a bug") {
  RoutingSpec r;
  r.distribution = RoutingDistribution::kHistogram;
  CHECK_THROWS_AS(moe::ExpertLoadModel(r, 4, 2, 0), InternalError);
  CHECK_THROWS_AS(moe::ExpertLoadModel(histogram_routing({kStep0}), 8, 2, 0), InternalError);
}
