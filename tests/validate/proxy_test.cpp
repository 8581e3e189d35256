#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "validate/compare.hpp"
#include "validate/proxy.hpp"

using namespace moesim;

namespace {
Scenario mixtral() { return config::load_scenario_argument("mixtral-8x7b-h100-64"); }
}  // namespace

TEST_CASE("proxy: Mixtral on one HGX node keeps its shapes, drops the pipeline, cuts EP to the GPUs") {
  validate::ProxyOptions o;
  o.gpus = 8;
  const validate::ProxyPlan plan = validate::plan_proxy(mixtral(), o);
  const Scenario& p = plan.scenario;
  CHECK(p.system.gpus == 8);
  CHECK(p.parallel.pp == 1);
  CHECK(p.parallel.vpp == 1);
  CHECK(p.parallel.cp == 1);
  CHECK(p.parallel.ep == 8);
  CHECK(p.parallel.dp == 8);
  CHECK(p.model.hidden_size == mixtral().model.hidden_size);
  CHECK(p.model.moe_ffn_hidden_size == mixtral().model.moe_ffn_hidden_size);
  CHECK(p.model.vocab_size == validate::kProxyVocab);
  CHECK(p.model.num_layers >= 1);
  CHECK(p.model.num_layers <= validate::kMaxProxyLayers);
  CHECK(std::all_of(p.model.moe_layer_pattern.begin(), p.model.moe_layer_pattern.end(), [](bool b) { return b; }));
  CHECK_FALSE(p.optimizer.distributed);
  CHECK_FALSE(p.optimizer.overlap_grad_reduce);
  CHECK(p.training.global_batch_size == p.training.micro_batch_size * 8 * o.microbatches);
  CHECK(plan.notes.size() >= 4);
  // One GPU: EP 1, fewer layers fit (every expert on the one GPU).
  o.gpus = 1;
  const validate::ProxyPlan one = validate::plan_proxy(mixtral(), o);
  CHECK(one.scenario.parallel.ep == 1);
  CHECK(one.scenario.model.num_layers < p.model.num_layers);
}

TEST_CASE("proxy: a measured host_sync wait is dropped, and said") {
  Scenario s = mixtral();
  s.moe.host_sync_idle_s = 0.004;
  validate::ProxyOptions o;
  o.gpus = 8;
  const validate::ProxyPlan plan = validate::plan_proxy(s, o);
  CHECK(plan.scenario.moe.host_sync_idle_s == 0);
  CHECK(std::any_of(plan.notes.begin(), plan.notes.end(),
                    [](const std::string& n) { return n.rfind("no host_sync idle", 0) == 0; }));
  const std::vector<std::string> unpriced = validate::plan_proxy(mixtral(), o).notes;
  CHECK(std::none_of(unpriced.begin(), unpriced.end(),
                     [](const std::string& n) { return n.rfind("no host_sync idle", 0) == 0; }));
}

TEST_CASE("proxy: a one-stage proxy's phases add up to its predicted step") {
  validate::ProxyOptions o;
  o.gpus = 8;
  o.layers = 2;
  const validate::ProxyPlan plan = validate::plan_proxy(mixtral(), o);
  REQUIRE(plan.scenario.model.num_layers == 2);
  const validate::ProxyPrediction p = validate::predict_proxy(plan);
  double sum = 0;
  for (const auto& [name, seconds] : p.phases_s) {
    CHECK(seconds >= 0);
    sum += seconds;
  }
  // Nothing overlaps in the proxy (blocking all-to-alls, DP after the backward), so the step is its
  // phases back to back; the head ops are taken out of both.
  CHECK(sum == doctest::Approx(p.step_time_s).epsilon(0.01));
  CHECK(p.phases_s.at("mlp") > p.phases_s.at("attention"));
  CHECK(p.phases_s.at("ep_comm") > 0);
  CHECK(p.phases_s.at("tp_comm") == 0);
  CHECK(p.peak_memory_bytes > 0);
}

TEST_CASE("proxy: what it cannot build is refused with the rule") {
  validate::ProxyOptions o;
  o.gpus = 9;
  CHECK_THROWS_WITH_AS((void)validate::plan_proxy(mixtral(), o), doctest::Contains("1 to 8"), InputError);
  o.gpus = 8;
  o.layers = 33;
  CHECK_THROWS_WITH_AS((void)validate::plan_proxy(mixtral(), o), doctest::Contains("1 to 32"), InputError);
  o.layers = 32;  // every layer on one node: does not fit 80 GB
  CHECK_THROWS_WITH_AS((void)validate::plan_proxy(mixtral(), o), doctest::Contains("does not fit"), InputError);
  o.layers.reset();
  o.microbatches = 0;
  CHECK_THROWS_AS((void)validate::plan_proxy(mixtral(), o), InputError);
}
