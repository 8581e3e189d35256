#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "engine/flow_network.hpp"
#include "reference_model.hpp"

using namespace moesim;
using namespace moesim::engine;

namespace {

constexpr double kGBps = 1e9;
constexpr SimTime kUs = 1'000'000;  // ps
constexpr SimTime kMs = 1'000'000'000;

/// Runs `flows` on links of `capacity` (B/s) and returns each flow's completion time.
struct Run {
  std::vector<SimTime> done;
  std::vector<LinkStats> stats;
  std::int64_t recomputations = 0;
};

Run run(const std::vector<double>& capacity, const std::vector<FlowRequest>& flows, FlowNetworkOptions options = {}) {
  EventQueue q;
  std::vector<LinkCapacity> links;
  for (double c : capacity) links.push_back({c});
  FlowNetwork net(q, links, options);
  Run r;
  r.done.assign(flows.size(), -1);
  for (const FlowRequest& f : flows) {
    net.add_flow(f, [&r](FlowId id, SimTime at) { r.done[static_cast<std::size_t>(id)] = at; });
  }
  q.run();
  r.stats = net.link_stats();
  r.recomputations = net.rate_recomputations();
  CHECK(net.active_flows() == 0);
  return r;
}

/// A random instance: links of 10-100 GB/s, paths of 1-4 distinct links, log-normal sizes around
/// 1 MB, latencies up to 5 us, and starts either spread over 200 us or in `waves` bursts (0, 100,
/// 200 us), the collective-like case where completions crowd together and batching matters.
struct Instance {
  std::vector<double> capacity;
  std::vector<FlowRequest> flows;
};

Instance random_instance(std::uint64_t seed, int links, int flows, int waves = 0) {
  RngStream rng(seed, "test/flow_network/instance");
  Instance in;
  for (int l = 0; l < links; ++l) in.capacity.push_back((10 + 90 * rng.uniform()) * kGBps);
  for (int f = 0; f < flows; ++f) {
    FlowRequest r;
    const int len = 1 + static_cast<int>(rng.below(4));
    while (static_cast<int>(r.path.size()) < len) {
      const auto l = static_cast<LinkId>(rng.below(static_cast<std::uint64_t>(links)));
      if (std::find(r.path.begin(), r.path.end(), l) == r.path.end()) r.path.push_back(l);
    }
    r.bytes = 1e6 * std::exp(rng.normal());
    r.start = waves > 0 ? static_cast<SimTime>(rng.below(static_cast<std::uint64_t>(waves))) * 100 * kUs
                        : static_cast<SimTime>(rng.below(200 * kUs));
    r.latency = waves > 0 ? static_cast<SimTime>(rng.below(2)) * kUs : static_cast<SimTime>(rng.below(5 * kUs));
    in.flows.push_back(r);
  }
  return in;
}

std::vector<test::ReferenceFlow> reference_flows(const Instance& in) {
  std::vector<test::ReferenceFlow> out;
  for (const FlowRequest& f : in.flows) {
    out.push_back({std::vector<int>(f.path.begin(), f.path.end()), f.bytes, static_cast<double>(f.start + f.latency)});
  }
  return out;
}

}  // namespace

TEST_CASE("one flow on one link finishes at latency + bytes / capacity") {
  // 1 MB at 1 GB/s is exactly 1 ms.
  auto r = run({1 * kGBps}, {{{0}, 1e6, 0, 5 * kUs}});
  CHECK(r.done[0] == 5 * kUs + 1 * kMs);
  // 1000 B at 3 GB/s is 333,333.33 ps after a 2 us latency starting at 7 us: rounded up, not down.
  r = run({3 * kGBps}, {{{0}, 1000, 7 * kUs, 2 * kUs}});
  CHECK(r.done[0] == 9 * kUs + 333'334);
  CHECK(r.stats[0].bytes == doctest::Approx(1000).epsilon(1e-12));
  CHECK(std::abs(r.stats[0].busy_time - 333'334) <= 1);
  CHECK(r.stats[0].peak_utilisation == doctest::Approx(1.0));
}

TEST_CASE("two flows share a link equally; the first to finish releases its bandwidth") {
  // 1 GB/s shared by 1 MB and 3 MB: 0.5 GB/s each, so the 1 MB flow ends at 2 ms having let the
  // other move 1 MB too; the remaining 2 MB then go at the full 1 GB/s: done at 2 + 2 = 4 ms.
  const auto r = run({1 * kGBps}, {{{0}, 1e6, 0, 0}, {{0}, 3e6, 0, 0}});
  CHECK(r.done[0] == 2 * kMs);
  CHECK(r.done[1] == 4 * kMs);
  CHECK(r.stats[0].bytes == doctest::Approx(4e6));
  CHECK(r.stats[0].busy_time == 4 * kMs);
  CHECK(r.stats[0].peak_utilisation == doctest::Approx(1.0));
}

TEST_CASE("max-min over three links: a flow keeps its bottleneck when another link frees up") {
  // Links A = 10, B = 8, C = 4 GB/s; flows f0 on A, f1 on A+B, f2 on B+C, f3 on C, 10 MB each.
  // Max-min (see max_min_test): f0 = f1 = 5 GB/s, f2 = f3 = 2 GB/s; B carries 7 of 8.
  // f0 and f1 finish at 10 MB / 5 GB/s = 2 ms; f2 and f3 have moved 4 MB by then. With A and B
  // empty, f2 is still held to 2 GB/s by C (shared with f3): 6 MB / 2 GB/s = 3 ms more, so 5 ms.
  FlowNetworkOptions o;
  o.record_utilisation_timeline = true;
  EventQueue q;
  FlowNetwork net(q, {{10 * kGBps}, {8 * kGBps}, {4 * kGBps}}, o);
  std::vector<SimTime> done(4, -1);
  const std::vector<std::vector<LinkId>> paths = {{0}, {0, 1}, {1, 2}, {2}};
  for (const auto& p : paths) net.add_flow({p, 10e6, 0, 0}, [&](FlowId f, SimTime at) { done[f] = at; });
  q.run();
  CHECK(done == std::vector<SimTime>{2 * kMs, 2 * kMs, 5 * kMs, 5 * kMs});
  const auto& s = net.link_stats();
  CHECK(s[1].peak_utilisation == doctest::Approx(7.0 / 8));
  CHECK(s[1].bytes == doctest::Approx(20e6));
  // B's load: 7 GB/s until 2 ms, then f2's 2 GB/s until 5 ms, then idle.
  const auto& tl = net.utilisation_timeline(1);
  REQUIRE(tl.size() == 3);
  CHECK(tl[0].first == 0);
  CHECK(tl[0].second == doctest::Approx(7.0 / 8));
  CHECK(tl[1].first == 2 * kMs);
  CHECK(tl[1].second == doctest::Approx(2.0 / 8));
  CHECK(tl[2] == std::pair<SimTime, double>{5 * kMs, 0.0});
  CHECK(net.utilisation_timeline(0).size() == 2);  // A: full, then idle
  CHECK(net.rate_recomputations() == 2);
}

TEST_CASE("a flow with an empty path completes exactly after its latency") {
  const auto r = run({1 * kGBps}, {{{}, 5e9, 3 * kUs, 4 * kUs}, {{0}, 1e3, 0, 0}});
  CHECK(r.done[0] == 7 * kUs);
  CHECK(r.done[1] == 1'000'000);
}

TEST_CASE("flows become active at start + latency and can be chained from completion callbacks") {
  EventQueue q;
  FlowNetwork net(q, {{1 * kGBps}});
  SimTime second_done = -1;
  net.add_flow({{0}, 1e6, 10 * kUs, 1 * kUs}, [&](FlowId, SimTime at) {
    CHECK(at == 11 * kUs + 1 * kMs);
    CHECK(q.now() == at);
    // The next flow starts when this one ends; 2 MB alone on the link take 2 ms after 1 us.
    net.add_flow({{0}, 2e6, at, 1 * kUs}, [&](FlowId, SimTime at2) { second_done = at2; });
  });
  q.run();
  CHECK(second_done == 11 * kUs + 1 * kMs + 1 * kUs + 2 * kMs);
}

TEST_CASE("tolerance 0 is exact: it matches an independent continuous-time model") {
  const Instance in = random_instance(1, 8, 120);
  const auto expected = test::reference_completions(in.capacity, reference_flows(in));
  for (const bool incremental : {true, false}) {
    FlowNetworkOptions o;
    o.incremental_rates = incremental;
    const auto r = run(in.capacity, in.flows, o);
    for (std::size_t f = 0; f < in.flows.size(); ++f) {
      // Rounded up to the picosecond (never early, allowing 1 ps for the two models' rounding).
      CHECK(static_cast<double>(r.done[f]) >= expected[f] - 1);
      CHECK(static_cast<double>(r.done[f]) <= std::ceil(expected[f]) + 1);
    }
  }
}

TEST_CASE("batching error bound: with tolerance 1e-3 every flow is within 0.1 % of its exact time") {
  for (const std::uint64_t seed : {2, 3, 4}) {
    const Instance in = random_instance(seed, 10, 2000, 3);
    const auto exact = run(in.capacity, in.flows);
    FlowNetworkOptions o;
    o.completion_batch_tolerance = 1e-3;
    const auto batched = run(in.capacity, in.flows, o);
    // It did batch, so the bound is not vacuous.
    CHECK(static_cast<double>(batched.recomputations) < 0.8 * static_cast<double>(exact.recomputations));
    double worst = 0;
    for (std::size_t f = 0; f < in.flows.size(); ++f) {
      // Relative to the flow's own duration, which is stricter than relative to its end time.
      const auto active = static_cast<double>(in.flows[f].start + in.flows[f].latency);
      const double err = std::abs(static_cast<double>(batched.done[f] - exact.done[f])) /
                         (static_cast<double>(exact.done[f]) - active);
      worst = std::max(worst, err);
    }
    INFO("seed " << seed << ": worst relative error " << worst << ", recomputations " << batched.recomputations
                 << " vs " << exact.recomputations);
    CHECK(worst <= 1e-3);
  }
}

TEST_CASE("same inputs give the same completion times") {
  const Instance in = random_instance(5, 10, 300);
  for (const double tol : {0.0, 1e-2}) {
    FlowNetworkOptions o;
    o.completion_batch_tolerance = tol;
    CHECK(run(in.capacity, in.flows, o).done == run(in.capacity, in.flows, o).done);
  }
}

TEST_CASE("incremental restarts give the same times as solving from scratch") {
  const Instance in = random_instance(6, 10, 300);
  FlowNetworkOptions full;
  full.incremental_rates = false;
  const auto a = run(in.capacity, in.flows);
  const auto b = run(in.capacity, in.flows, full);
  for (std::size_t f = 0; f < in.flows.size(); ++f) CHECK(std::abs(a.done[f] - b.done[f]) <= 1);
}

TEST_CASE("link bytes are conserved and utilisation never exceeds 1") {
  const Instance in = random_instance(7, 10, 300);
  for (const double tol : {0.0, 1e-3, 5e-2}) {
    FlowNetworkOptions o;
    o.completion_batch_tolerance = tol;
    const auto r = run(in.capacity, in.flows, o);
    std::vector<double> expected(in.capacity.size(), 0.0);
    for (const FlowRequest& f : in.flows) {
      for (LinkId l : f.path) expected[l] += f.bytes;
    }
    for (std::size_t l = 0; l < in.capacity.size(); ++l) {
      CHECK(r.stats[l].bytes == doctest::Approx(expected[l]).epsilon(1e-9));
      CHECK(r.stats[l].peak_utilisation <= 1.0);
      CHECK(r.stats[l].peak_utilisation > 0.0);
      // Busy no longer than the run, and at least long enough to carry the bytes at full speed
      // (a batch takes flows off their links up to the tolerance early).
      const SimTime last = *std::max_element(r.done.begin(), r.done.end());
      CHECK(r.stats[l].busy_time <= last);
      CHECK(static_cast<double>(r.stats[l].busy_time) >= expected[l] / in.capacity[l] * 1e12 * (1 - tol - 1e-9));
    }
  }
}

TEST_CASE("link stats can be read mid-run and are booked up to the queue's clock") {
  EventQueue q;
  FlowNetwork net(q, {{1 * kGBps}});
  net.add_flow({{0}, 1e6, 0, 0});
  q.run(kMs / 4);
  CHECK(net.link_stats()[0].bytes == doctest::Approx(0.25e6));
  CHECK(net.link_stats()[0].busy_time == kMs / 4);
  CHECK(net.active_flows() == 1);
  q.run();
  CHECK(net.link_stats()[0].bytes == doctest::Approx(1e6));
  CHECK(net.active_flows() == 0);
}

TEST_CASE("programmer errors are InternalErrors") {
  EventQueue q;
  CHECK_THROWS_AS(FlowNetwork(q, {{0}}), InternalError);
  CHECK_THROWS_AS(FlowNetwork(q, {{-1 * kGBps}}), InternalError);
  FlowNetworkOptions bad;
  bad.completion_batch_tolerance = -0.1;
  CHECK_THROWS_AS(FlowNetwork(q, {{kGBps}}, bad), InternalError);
  bad.completion_batch_tolerance = 1.0;
  CHECK_THROWS_AS(FlowNetwork(q, {{kGBps}}, bad), InternalError);

  FlowNetwork net(q, {{kGBps}, {kGBps}});
  CHECK_THROWS_AS(net.add_flow({{0}, 0, 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{0}, -5, 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{0}, std::numeric_limits<double>::quiet_NaN(), 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{0}, std::numeric_limits<double>::infinity(), 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{0}, 1, 0, -1}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{2}, 1, 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{-1}, 1, 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{1, 0, 1}, 1, 0, 0}), InternalError);
  CHECK_THROWS_AS(net.add_flow({{0}, 1, kNever - 5, 10}), InternalError);
  CHECK_THROWS_AS((void)net.utilisation_timeline(2), InternalError);
  q.schedule(100, 0, [] {});
  q.run();
  CHECK_THROWS_AS(net.add_flow({{0}, 1, 99, 0}), InternalError);  // starts before now
  CHECK_NOTHROW(net.add_flow({{0}, 1, 100, 0}));
}
