// The Megatron-Bridge recipe settings (tests/validation/megatron-bridge-recipe-settings.json, read from
// the public release recipes) become each published point's runtime: every row maps, and the rows
// below read as their recipes say (the `sources` of each row name the recipe files).
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "../test_paths.hpp"
#include "config/json_reader.hpp"
#include "config/published_loader.hpp"
#include "config/recipe_settings.hpp"

using namespace moesim;

TEST_CASE("every row of the recipe settings maps to a runtime") {
  std::ifstream in(test::source_dir() / "tests" / "validation" / "megatron-bridge-recipe-settings.json");
  REQUIRE(in.good());
  const config::Json doc = config::Json::parse(in);
  REQUIRE(doc.size() > 100);
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    CAPTURE(it.key());
    const auto settings = config::bridge_recipe_settings(it.key());
    REQUIRE(settings.has_value());
    CHECK_FALSE(settings->sources.empty());
    CHECK(settings->release == (*it)["release"].get<std::string>());
  }
}

TEST_CASE("recipe runtimes: eager, TE-scoped, per-layer and full-iteration CUDA graphs; fusions; token-drop") {
  using enum CudaGraphScope;
  // v0.6.0 perf_recipes/qwen/gb200/qwen3_moe.py: the whole iteration in one graph.
  const auto full = config::bridge_recipe_settings("mb-26-08-pre-training-dgx-gb200-qwen3-30b-a3b-mxfp8-8-0");
  REQUIRE(full);
  CHECK(full->cuda_graph == std::vector<CudaGraphScope>{kFullIteration});
  CHECK(full->fusions == std::vector<Fusion>{Fusion::kMoePermute, Fusion::kMoeRouter, Fusion::kCrossEntropy,
                                             Fusion::kBiasSwiglu, Fusion::kRope, Fusion::kGradientAccumulation,
                                             Fusion::kMaskedSoftmax});
  // A published point's id is the run's followed by its metric.
  CHECK(config::bridge_recipe_settings("mb-26-08-pre-training-dgx-gb200-qwen3-30b-a3b-mxfp8-8-0-tokens_per_s_per_gpu")
            ->cuda_graph == full->cuda_graph);
  // v0.4.0 qwen3_workload_base_configs.py B200: TE graphs of attention, router and preprocessing.
  const auto scoped = config::bridge_recipe_settings("mb-26-04-pre-training-dgx-b200-qwen3-30b-a3b-mxfp8-8-0");
  REQUIRE(scoped);
  CHECK(scoped->cuda_graph == std::vector<CudaGraphScope>{kAttn, kMoeRouter, kMoePreprocess});
  // 25.09 token-drop: per-layer graphs (cuda_graph_impl local) of padded, capacity-bounded MoE layers.
  const auto tokendrop = config::bridge_recipe_settings("mb-25-09-pre-training-dgx-b200-qwen3-30b-a3b-tokendrop-fp8-8-0");
  REQUIRE(tokendrop);
  CHECK(tokendrop->cuda_graph == std::vector<CudaGraphScope>{kLayer});
  CHECK(tokendrop->capacity_factor == 1.0);
  CHECK(tokendrop->pad_to_capacity);
  // The H100 rows run eager.
  CHECK(config::bridge_recipe_settings("mb-26-06-pre-training-dgx-h100-qwen3-30b-a3b-fp8-16-0")->cuda_graph.empty());
  CHECK_FALSE(config::bridge_recipe_settings("mb-99-01-pre-training-dgx-h100-nothing-8-0").has_value());
}

TEST_CASE("every Megatron-Bridge published point takes its recipe's runtime and still loads") {
  int with_recipe = 0;
  for (const auto& pt : config::load_published_points("")) {
    if (pt.id.rfind("mb-", 0) != 0) continue;
    CAPTURE(pt.id);
    CHECK(pt.skip_reason.find("layout:") == std::string::npos);  // the recipe's runtime passes the rules
    if (!pt.skip_reason.empty()) continue;  // superseded releases, LoRA
    const auto settings = config::bridge_recipe_settings(pt.id);
    REQUIRE(settings.has_value());  // every validated run has its recipe's settings
    ++with_recipe;
    CHECK(pt.scenario.runtime.cuda_graph == settings->cuda_graph);
    CHECK(pt.scenario.runtime.fusions == settings->fusions);
  }
  MESSAGE(with_recipe << " Megatron-Bridge points run on their recipe's runtime");
  CHECK(with_recipe >= 30);
}
