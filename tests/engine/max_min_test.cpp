#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "engine/max_min.hpp"
#include "reference_model.hpp"

using namespace moesim;
using namespace moesim::engine;

namespace {

std::vector<double> solve_rates(MaxMinSolver& s, int slots) {
  s.solve([](MaxMinSolver::Slot, MaxMinSolver::Clock&, double, double, std::size_t) {});
  std::vector<double> r;
  for (int i = 0; i < slots; ++i) r.push_back(s.rate(i));
  return r;
}

}  // namespace

TEST_CASE("max-min: three links, four flows, allocation known by hand") {
  // Links A = 10, B = 8, C = 4. Flows: f0 on A; f1 on A and B; f2 on B and C; f3 on C.
  // Fair shares at the start: A 10/2 = 5, B 8/2 = 4, C 4/2 = 2. C is the tightest: f2 = f3 = 2.
  // Then B has 8 - 2 = 6 left for f1 alone (6) and A still 10/2 = 5: A is next, f0 = f1 = 5.
  // B ends carrying 2 + 5 = 7 of 8: a link can end unsaturated, bottlenecking nobody.
  MaxMinSolver s({10, 8, 4});
  const std::vector<std::vector<MaxMinSolver::Link>> paths = {{0}, {0, 1}, {1, 2}, {2}};
  for (int f = 0; f < 4; ++f) s.add(f, paths[f]);
  const auto r = solve_rates(s, 4);
  CHECK(r[0] == doctest::Approx(5));
  CHECK(r[1] == doctest::Approx(5));
  CHECK(r[2] == doctest::Approx(2));
  CHECK(r[3] == doctest::Approx(2));
  CHECK(s.load(0) == doctest::Approx(10));
  CHECK(s.load(1) == doctest::Approx(7));
  CHECK(s.load(2) == doctest::Approx(4));
  CHECK(s.level_count() == 2);

  // Without f3: A 10/2 = 5, B 8/2 = 4, C 4/1 = 4. B and C tie at 4 and B, the lower id, goes
  // first: f1 = f2 = 4, which leaves C at 0 flows. A then has 10 - 4 = 6 for f0 alone.
  s.remove(3);
  s.solve([](MaxMinSolver::Slot, MaxMinSolver::Clock&, double, double, std::size_t) {});
  CHECK(s.rate(0) == doctest::Approx(6));
  CHECK(s.rate(1) == doctest::Approx(4));
  CHECK(s.rate(2) == doctest::Approx(4));
  CHECK(s.load(2) == doctest::Approx(4));
}

TEST_CASE("max-min: ties between equally tight links are broken by link id") {
  // Both links offer a share of 6; link 0 (carrying slot 1) must be filled first.
  MaxMinSolver s({6, 6});
  s.add(0, std::vector<MaxMinSolver::Link>{1});
  s.add(1, std::vector<MaxMinSolver::Link>{0});
  s.clock(0).activation = 0;  // clocks carry the caller's data: mark them to see the order
  s.clock(1).activation = 1;
  std::vector<double> visit_order;
  s.solve([&](MaxMinSolver::Slot, MaxMinSolver::Clock& c, double, double, std::size_t) { visit_order.push_back(c.activation); });
  CHECK(visit_order == std::vector<double>{1, 0});
  CHECK(s.level_count() == 2);
  CHECK(s.rate(0) == 6);
  CHECK(s.rate(1) == 6);
}

TEST_CASE("max-min: matches textbook progressive filling on random instances, through adds and removes") {
  RngStream rng(11, "test/max_min/random");
  std::int64_t partial_solves = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const int links = 3 + static_cast<int>(rng.below(8));
    std::vector<double> cap;
    for (int l = 0; l < links; ++l) cap.push_back(1 + 9 * rng.uniform());
    MaxMinSolver fast(cap), full(cap);
    full.set_partial_restart(false);
    std::vector<std::vector<int>> paths;
    std::vector<int> live;
    for (int step = 0; step < 40; ++step) {
      if (live.empty() || rng.uniform() < 0.6) {
        std::vector<int> path;
        const int len = 1 + static_cast<int>(rng.below(std::min(links, 4)));
        while (static_cast<int>(path.size()) < len) {
          const int l = static_cast<int>(rng.below(links));
          if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
        }
        const int slot = static_cast<int>(paths.size());
        paths.push_back(path);
        fast.add(slot, path);
        full.add(slot, path);
        live.push_back(slot);
      } else {
        // Removals only, sometimes several before a solve: the partial restart's case.
        const int removals = 1 + static_cast<int>(rng.below(3));
        for (int k = 0; k < removals && !live.empty(); ++k) {
          const std::size_t i = rng.below(live.size());
          fast.remove(live[i]);
          full.remove(live[i]);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
      fast.solve([](MaxMinSolver::Slot, MaxMinSolver::Clock&, double, double, std::size_t) {});
      full.solve([](MaxMinSolver::Slot, MaxMinSolver::Clock&, double, double, std::size_t) {});
      std::vector<std::vector<int>> live_paths;
      for (int f : live) live_paths.push_back(paths[f]);
      const auto expected = test::reference_max_min(cap, live_paths);
      for (std::size_t i = 0; i < live.size(); ++i) {
        CHECK(fast.rate(live[i]) == doctest::Approx(expected[i]).epsilon(1e-9));
        CHECK(full.rate(live[i]) == doctest::Approx(expected[i]).epsilon(1e-9));
      }
      for (int l = 0; l < links; ++l) CHECK(fast.load(l) <= cap[l] * (1 + 1e-12));
    }
    partial_solves += fast.partial_solves();
  }
  CHECK(partial_solves > 20);  // the restart path was exercised, not just the full one
}

TEST_CASE("max-min: hundreds of removal-only solves (frozen-mark epochs wrap, removed flows stay listed)") {
  // 700 flows removed one by one: 700 solves, over twice the 254 frozen-mark epochs, and too few
  // holes to trigger a reorder, so the link lists keep every removed flow throughout. Restarts low
  // in the levels take the redo side, high ones the undo side; both must match the textbook.
  RngStream rng(17, "test/max_min/epochs");
  const std::vector<double> cap = {3, 5, 7, 11, 13, 2};
  const int links = static_cast<int>(cap.size());
  MaxMinSolver s(cap);
  std::vector<std::vector<int>> paths;
  std::vector<int> live;
  for (int f = 0; f < 700; ++f) {
    std::vector<int> path;
    const int len = 1 + static_cast<int>(rng.below(3));
    while (static_cast<int>(path.size()) < len) {
      const int l = static_cast<int>(rng.below(links));
      if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
    }
    paths.push_back(path);
    s.add(f, path);
    live.push_back(f);
  }
  while (!live.empty()) {
    // The level visitor sees the refilled levels once each, in order, up to the last one, with
    // the level's rate on every flow it froze (levels before the restart are not visited).
    std::size_t next_level = 0;
    bool visited = false;
    s.solve_by_level([&](std::size_t level, double rate, std::span<const std::uint32_t> records,
                         std::span<const double> old_rates) {
      if (visited) CHECK(level == next_level);
      visited = true;
      next_level = level + 1;
      CHECK(records.size() == old_rates.size());
      for (const std::uint32_t r : records) CHECK(s.rate(s.slot_at(r)) == rate);
    });
    if (visited) CHECK(next_level == s.level_count());
    std::vector<std::vector<int>> live_paths;
    for (const int f : live) live_paths.push_back(paths[f]);
    const auto expected = test::reference_max_min(cap, live_paths);
    for (std::size_t i = 0; i < live.size(); ++i) CHECK(s.rate(live[i]) == doctest::Approx(expected[i]).epsilon(1e-9));
    for (int l = 0; l < links; ++l) CHECK(s.load(l) <= cap[l] * (1 + 1e-12));
    const std::size_t i = rng.below(live.size());
    s.remove(live[i]);
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
  }
  CHECK(s.partial_solves() > 50);
  for (int l = 0; l < links; ++l) CHECK(s.flow_count(l) == 0);
}

TEST_CASE("max-min: a visited flow's old rate is the initial rate, then its previous fair rate") {
  MaxMinSolver s({4});
  s.add(0, std::vector<MaxMinSolver::Link>{0}, 123.0);
  std::vector<double> old_rates;
  s.solve([&](MaxMinSolver::Slot, MaxMinSolver::Clock&, double old_rate, double, std::size_t) { old_rates.push_back(old_rate); });
  s.add(1, std::vector<MaxMinSolver::Link>{0});
  s.solve([&](MaxMinSolver::Slot, MaxMinSolver::Clock&, double old_rate, double, std::size_t) { old_rates.push_back(old_rate); });
  std::sort(old_rates.begin(), old_rates.end());
  CHECK(old_rates == std::vector<double>{0.0, 4.0, 123.0});
  CHECK(s.rate(0) == 2);
}

TEST_CASE("max-min: bad paths and slots are InternalErrors") {
  CHECK_THROWS_AS(MaxMinSolver({1, 0}), InternalError);
  CHECK_THROWS_AS(MaxMinSolver({-1}), InternalError);
  CHECK_THROWS_AS(MaxMinSolver({INFINITY}), InternalError);
  MaxMinSolver s({1, 1});
  CHECK_THROWS_AS(s.add(0, std::vector<MaxMinSolver::Link>{}), InternalError);
  CHECK_THROWS_AS(s.add(0, std::vector<MaxMinSolver::Link>{2}), InternalError);
  CHECK_THROWS_AS(s.add(0, std::vector<MaxMinSolver::Link>{0, 0}), InternalError);
  CHECK_THROWS_AS(s.add(-1, std::vector<MaxMinSolver::Link>{0}), InternalError);
  s.add(0, std::vector<MaxMinSolver::Link>{0});
  CHECK_THROWS_AS(s.add(0, std::vector<MaxMinSolver::Link>{1}), InternalError);
  CHECK_THROWS_AS(s.remove(1), InternalError);
  s.remove(0);
  CHECK_THROWS_AS(s.remove(0), InternalError);
}
