// Issue 7 must-show 2: does moesim rank layouts the way reality does? For every runnable published
// Megatron-Bridge point (Llama-3 dense and Qwen3-30B-A3B MoE), the published layout's rank among the
// planner's candidates for the same model, system, GPU count, batch and precision.
#include <doctest/doctest.h>

#include <cstdio>

#include "../test_paths.hpp"
#include "config/published_loader.hpp"
#include "planner/published_rank.hpp"

using namespace moesim;

namespace {
// The target: the top 5 % for at least 80 % of the points.
constexpr double kTopShare = 0.05;
constexpr double kTargetPoints = 0.80;
}  // namespace

TEST_CASE("published Megatron-Bridge layouts rank near the top of the planner's candidates") {
  const auto points = config::load_published_points((test::source_dir() / "tests/validation/published.json").string());
  int ranked = 0, in_top = 0, oom = 0;
  for (const auto& pt : points) {
    if (pt.group != "megatron-bridge" || !pt.skip_reason.empty()) continue;
    const auto r = planner::rank_published_layout(pt.scenario);
    ++ranked;
    const bool top = r.percentile <= kTopShare && r.published_fits;
    in_top += top ? 1 : 0;
    oom += r.published_fits ? 0 : 1;
    std::printf("%-72s rank %4lld of %5lld (%5.1f %%)%s%s\n", pt.id.c_str(), static_cast<long long>(r.rank),
                static_cast<long long>(r.feasible), 100.0 * r.percentile, r.published_fits ? "" : "  [predicted OOM]",
                top ? "" : "  MISS");
    CHECK(r.rank >= 1);
    CHECK(r.rank <= r.feasible);
  }
  std::printf("%d of %d published layouts in the top %.0f %% (target %.0f %% of the points); %d predicted OOM\n", in_top,
              ranked, 100.0 * kTopShare, 100.0 * kTargetPoints, oom);
  REQUIRE(ranked >= 25);
  CHECK_MESSAGE(in_top >= kTargetPoints * ranked, "issue 7 target: ", in_top, " of ", ranked,
                " published layouts in the top 5 %");
}
