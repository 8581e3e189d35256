// Under skew the simulation costs the expert GEMMs from each EP rank's per-expert token counts
// (compute/grouped_gemm), not only from its total: two routings whose per-rank totals agree but
// whose per-expert spreads differ run the expert kernels in different times.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "../test_paths.hpp"
#include "config/scenario_loader.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

namespace {

/// tests/data/small-moe-histogram.json (16 experts, EP 4: 4 local experts per rank, 4 MoE layers)
/// routed by every MoE layer's counts `per_expert`.
Scenario with_counts(const std::vector<double>& per_expert) {
  Scenario s = config::load_scenario_file((test::source_dir() / "tests/data/small-moe-histogram.json").string());
  s.host_costs = {};  // the GPU side only: a host-bound step would hide the expert GEMMs' spread
  auto h = std::make_shared<RoutingHistogram>(*s.moe.routing.histogram);
  for (auto& step : h->tokens) {
    for (auto& layer : step) layer = per_expert;
  }
  s.moe.routing.histogram = h;
  return s;
}

/// Rank j holds experts 4j … 4j+3; each rank's total is `rank_total[j]`, split over its experts by
/// `split` (shares summing to 1).
std::vector<double> counts(const std::vector<double>& rank_total, const std::vector<double>& split) {
  std::vector<double> out;
  for (const double total : rank_total) {
    for (const double share : split) out.push_back(total * share);
  }
  return out;
}

double rank_compute(const Result& r, std::int64_t ep_rank) {
  for (const RankActivity& a : r.simulation.ranks) {
    if (a.ep_rank == ep_rank) return a.compute_s;
  }
  FAIL("no simulated rank with EP index " << ep_rank);
  return 0;
}

/// Seconds the expert GEMMs (expert_fc1, expert_fc2: forward, both gradients, recompute) ran on the
/// simulated rank with EP index `ep_rank`.
double expert_gemm_seconds(const Scenario& s, std::int64_t ep_rank) {
  sim::SimOptions options;
  options.record_timeline = true;
  const sim::SimOutput out = sim::simulate_step(s, options);
  const Timeline& t = out.timeline;
  double ps = 0;
  for (const TimelineEvent& e : t.events) {
    const std::string& name = t.names[e.name];
    if ((name.starts_with("expert_fc1") || name.starts_with("expert_fc2")) &&
        e.process == static_cast<std::int32_t>(ep_rank)) {
      ps += static_cast<double>(e.duration_ps);
    }
  }
  return ps * 1e-12;
}

}  // namespace

TEST_CASE("equal per-rank totals, different per-expert spreads: the expert GEMMs cost differently") {
  const std::vector<double> rank_total{4000, 3000, 2000, 1000};
  const Scenario even = with_counts(counts(rank_total, {0.25, 0.25, 0.25, 0.25}));
  // Every rank's copies on one of its four experts: the same tokens in a quarter of the tiles, so the
  // weight-gradient GEMM (k×n tiles per expert, the tokens its depth) leaves SMs idle.
  const Scenario one_hot = with_counts(counts(rank_total, {1, 0, 0, 0}));
  // Nonzero but uneven: more partially filled tiles than the even split.
  const Scenario ragged = with_counts(counts(rank_total, {0.55, 0.15, 0.15, 0.15}));
  const Result r_even = sim::simulate_step(even).result;
  const Result r_hot = sim::simulate_step(one_hot).result;
  // Same rank loads: the same imbalance and the same all-to-all traffic.
  CHECK(r_even.routing.mean_imbalance == doctest::Approx(1.6).scale(0));
  CHECK(r_hot.routing.mean_imbalance == doctest::Approx(r_even.routing.mean_imbalance).scale(0));

  const double even_s = expert_gemm_seconds(even, 0);
  const double hot_s = expert_gemm_seconds(one_hot, 0);
  const double ragged_s = expert_gemm_seconds(ragged, 0);
  MESSAGE("most loaded rank's expert GEMMs: even " << even_s << " s, one-hot " << hot_s << " s, ragged " << ragged_s
                                                   << " s");
  CHECK(hot_s > 1.03 * even_s);
  CHECK(ragged_s > even_s);
  // The most loaded rank sets the pace of every MoE layer.
  CHECK(rank_compute(r_hot, 0) > rank_compute(r_even, 0));
  CHECK(r_hot.step_time_s > r_even.step_time_s);
}

TEST_CASE("equal per-expert loads through the skewed path reproduce the balanced simulation") {
  // A histogram with every expert alike runs every EP rank op by op (the skewed path), with each
  // expert at exactly its balanced share: the grouped GEMMs must cost what the estimator's batched
  // GEMMs do, so the step equals the balanced simulation's.
  const Scenario uniform = with_counts(std::vector<double>(16, 1000));
  Scenario balanced = uniform;
  balanced.moe.routing = RoutingSpec{};
  const Result a = sim::simulate_step(uniform).result;
  const Result b = sim::simulate_step(balanced).result;
  CHECK(a.simulation.ranks_simulated == 4);
  CHECK(b.simulation.ranks_simulated == 1);
  CHECK(a.step_time_s == doctest::Approx(b.step_time_s).epsilon(1e-9).scale(0));
  CHECK(rank_compute(a, 0) == doctest::Approx(rank_compute(b, 0)).epsilon(1e-9).scale(0));
}

TEST_CASE("with an EPLB placement the grouped expert GEMMs run over each rank's slots, replicas included") {
  const Scenario hot = with_counts(counts({4000, 3000, 2000, 1000}, {1, 0, 0, 0}));
  Scenario eplb = hot;
  eplb.moe.placement.strategy = PlacementStrategy::kEplb;
  eplb.moe.placement.redundant_experts = 4;  // one slot more on each of the 4 EP ranks
  const Result placed = sim::simulate_step(eplb).result;
  const Result contiguous = sim::simulate_step(hot).result;
  CHECK(placed.simulation.ranks_simulated == 4);
  // Five slots per rank: the hot experts are spread and replicated, so the busiest rank carries less.
  CHECK(placed.routing.mean_imbalance < contiguous.routing.mean_imbalance);
  CHECK(placed.step_time_s < contiguous.step_time_s);
  CHECK(sim::simulate_step(eplb).result.step_time_s == placed.step_time_s);  // deterministic
}
