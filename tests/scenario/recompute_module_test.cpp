// The recompute modules: one name each, in Megatron's --recompute-modules order, and what
// RecomputeSpec::has answers under each granularity.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "record/plan.hpp"
#include "scenario/recompute_module.hpp"
#include "scenario/scenario.hpp"

using namespace moesim;

TEST_CASE("recompute module names round-trip, in Megatron's order") {
  CHECK(names_of(kRecomputeModuleNames) == std::vector<std::string>{"core_attn", "moe_act", "layernorm", "mla_up_proj",
                                                                     "mlp", "moe", "shared_experts"});
  for (RecomputeModule m : values_of(kRecomputeModuleNames)) {
    CHECK(value_of(kRecomputeModuleNames, to_string(m)) == m);
  }
  CHECK(to_string(RecomputeModule::kMlaUpProj) == "mla_up_proj");
  CHECK_FALSE(value_of(kRecomputeModuleNames, "attention").has_value());
  CHECK_FALSE(value_of(kRecomputeModuleNames, "Core_Attn").has_value());  // spellings are exact
}

TEST_CASE("RecomputeSpec::has: none replays nothing, full everything, selective its modules") {
  RecomputeSpec none;
  RecomputeSpec full{RecomputeGranularity::kFull, {}};
  RecomputeSpec selective{RecomputeGranularity::kSelective, {RecomputeModule::kMoeAct, RecomputeModule::kLayernorm}};
  for (RecomputeModule m : values_of(kRecomputeModuleNames)) {
    CHECK_FALSE(none.has(m));
    CHECK(full.has(m));
    CHECK(selective.has(m) == (m == RecomputeModule::kMoeAct || m == RecomputeModule::kLayernorm));
  }
}

TEST_CASE("recompute_label keeps the modules in the order they were written") {
  CHECK(recompute_label({RecomputeGranularity::kNone, {}}) == "none");
  CHECK(recompute_label({RecomputeGranularity::kFull, {}}) == "full");
  CHECK(recompute_label({RecomputeGranularity::kSelective, {RecomputeModule::kCoreAttn}}) == "selective");
  CHECK(recompute_label({RecomputeGranularity::kSelective, {RecomputeModule::kLayernorm, RecomputeModule::kMoeAct}}) ==
        "selective(layernorm,moe_act)");
}
