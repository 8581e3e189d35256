#include <doctest/doctest.h>

#include <cstdio>

#include "../test_paths.hpp"
#include "accuracy/accuracy.hpp"
#include "config/published_loader.hpp"

using namespace moesim;

namespace {
const std::vector<accuracy::PublishedPoint>& points() {
  static const auto p = config::load_published_points((test::source_dir() / "tests/validation/published.json").string());
  return p;
}
void print(const accuracy::AccuracyReport& rep) {
  for (const auto& o : rep.outcomes) {
    std::printf("  %-48s published %9.4g predicted %9.4g error %+6.1f%%\n", o.point->id.c_str(), o.point->value,
                o.predicted, 100.0 * o.error);
  }
  for (const auto& g : rep.groups) std::printf("  group %s: %d points, MAPE %.1f%%\n", g.group.c_str(), g.points, 100 * g.mape);
}
}  // namespace

TEST_CASE("accuracy: Narayanan 2021 Table 1 (A100, GPT 1.7B-1T) MAPE <= 15%") {
  const auto rep = accuracy::run_accuracy(points(), "narayanan2021");
  print(rep);
  REQUIRE(rep.groups.size() == 1);
  CHECK(rep.groups[0].points == 10);
  CHECK(rep.groups[0].mape <= 0.15);
}

TEST_CASE("accuracy: Megatron-Core H100 weak scaling (GPT 1.7B-462B) MAPE <= 15%") {
  const auto rep = accuracy::run_accuracy(points(), "mcore-weak-scaling");
  print(rep);
  REQUIRE(rep.groups.size() == 1);
  CHECK(rep.groups[0].points == 9);
  CHECK(rep.groups[0].mape <= 0.15);
}

TEST_CASE("accuracy: every end-to-end point either runs or says why it is skipped") {
  const auto rep = accuracy::run_accuracy(points());
  for (const auto* p : rep.skipped) CHECK_MESSAGE(!p->skip_reason.empty(), p->id);
  for (const auto& o : rep.outcomes) CHECK_MESSAGE(o.failure.empty(), o.point->id << ": " << o.failure);
  CHECK(rep.outcomes.size() > 100);
  std::printf("  all points: %zu run, %zu skipped, overall MAPE %.1f%%\n", rep.outcomes.size(), rep.skipped.size(),
              100 * rep.overall_mape);
}
