// The unpriced-host-time caveat follows the run's stack: eager dropless MoE states it; a padded run
// (fixed shapes, no read-back) and a full-iteration CUDA graph (nothing launched per kernel, nothing
// synchronised inside the graph) do not.
#include <doctest/doctest.h>

#include "config/scenario_loader.hpp"
#include "program/host_caveat.hpp"
#include "schedule/stage_plan.hpp"

using namespace moesim;

namespace {

Scenario qwen3_on_h100() { return config::load_scenario_file("docs/scenarios/qwen3-30b-a3b-h100-16-bf16-alltoall.json"); }

}  // namespace

TEST_CASE("the host caveat: eager dropless states it; padded or full-iteration-graph runs do not") {
  Scenario eager = qwen3_on_h100();
  REQUIRE(eager.runtime.cuda_graph.empty());
  const auto stages = schedule::plan_stages(eager);
  const auto caveat = program::dropless_host_caveat(eager, stages);
  REQUIRE(caveat.has_value());
  CHECK(caveat->passes == 48 * eager.num_microbatches());  // one stage holds all 48 MoE layers
  CHECK(caveat->low_s == doctest::Approx(static_cast<double>(caveat->passes) * program::dropless_host_gap_low_s()));

  // TE-scoped graphs of the router and preprocessing still read the token counts back.
  Scenario scoped = eager;
  scoped.runtime.cuda_graph = {CudaGraphScope::kMoeRouter, CudaGraphScope::kMoePreprocess};
  CHECK(program::dropless_host_caveat(scoped, stages).has_value());

  Scenario graphed = eager;
  graphed.runtime.cuda_graph = {CudaGraphScope::kFullIteration};
  CHECK_FALSE(program::dropless_host_caveat(graphed, stages).has_value());

  Scenario padded = eager;
  padded.moe.capacity_factor = 1.0;
  padded.moe.pad_to_capacity = true;
  CHECK_FALSE(program::dropless_host_caveat(padded, stages).has_value());
}
