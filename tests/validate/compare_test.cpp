#include <doctest/doctest.h>

#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "validate/compare.hpp"
#include "validate/phases.hpp"
#include "validate/proxy.hpp"

using namespace moesim;

TEST_CASE("phases: every op of a layer lands in its block") {
  using validate::phase_of;
  CHECK(phase_of("compute", "qkv_proj") == "attention");
  CHECK(phase_of("compute", "core_attention (backward)") == "attention");
  CHECK(phase_of("compute", "q_down_proj (wgrad)") == "attention");
  CHECK(phase_of("compute", "input_norm") == "attention");
  CHECK(phase_of("compute", "pre_mlp_norm") == "mlp");
  CHECK(phase_of("compute", "router_topk") == "mlp");
  CHECK(phase_of("compute", "expert_fc1 (dgrad)") == "mlp");
  CHECK(phase_of("compute", "shared_fc2") == "mlp");
  CHECK(phase_of("compute", "permute (backward)") == "mlp");
  CHECK(phase_of("compute", "fc1") == "mlp");
  CHECK(phase_of("compute", "lm_head (wgrad)") == "head");
  CHECK(phase_of("compute", "cross_entropy") == "head");
  CHECK(phase_of("compute", "mtp_eh_proj") == "head");
  CHECK(phase_of("compute", "optimizer_step") == "optimizer");
  CHECK(phase_of("ep_comm", "dispatch") == "ep_comm");
  CHECK(phase_of("tp_comm", "attn_all_gather") == "tp_comm");
  CHECK(phase_of("dp_comm", "grad_all_reduce") == "dp_comm");
  CHECK(phase_of("pp_comm", "p2p_send") == "other");
}

namespace {
struct Fixture {
  validate::ProxyPlan plan;
  validate::ProxyPrediction predicted;
  MeasuredRun run;
  Fixture() {
    validate::ProxyOptions o;
    o.gpus = 8;
    o.layers = 2;
    plan = validate::plan_proxy(config::load_scenario_argument("mixtral-8x7b-h100-64"), o);
    predicted.step_time_s = 1.0;
    predicted.phases_s = {{"attention", 0.2}, {"mlp", 0.6}, {"ep_comm", 0.1},
                          {"tp_comm", 0.0},   {"dp_comm", 0.05}, {"optimizer", 0.05}};
    predicted.peak_memory_bytes = 40e9;
    run.source = "test";
    run.gpu = "h100-sxm";
    run.gpus = 8;
    run.layers = 2;
    run.steps = 20;
    run.warmup = 5;
    run.step_time_s = 1.05;
    run.phases_s = {{"attention", 0.21}, {"mlp", 0.62}, {"ep_comm", 0.11},
                    {"tp_comm", 0.0},    {"dp_comm", 0.05}, {"optimizer", 0.05}};
    run.peak_memory_bytes = 42e9;
  }
};
}  // namespace

TEST_CASE("compare: errors per phase and in total, the worst phase by seconds, the bounds") {
  Fixture f;
  ValidationResult v = validate::compare_run("mixtral", f.plan, f.predicted, f.run);
  REQUIRE(v.phases.size() == 6);
  CHECK(v.phases[0].phase == "attention");
  CHECK(v.phases[0].error == doctest::Approx((0.2 - 0.21) / 0.21));
  CHECK(v.phases[3].error == 0.0);  // tp_comm 0 against 0
  CHECK(v.phases[3].error_defined);
  CHECK(v.step_time_error == doctest::Approx((1.0 - 1.05) / 1.05));
  CHECK(v.peak_memory_error == doctest::Approx((40.0 - 42.0) / 42.0));
  CHECK(v.worst_phase == "mlp");  // 20 ms off; ep_comm 10 ms, attention 10 ms
  CHECK(v.within_bounds);
  // A run 30 % slower in its all-to-all than predicted is outside the bound and says so.
  f.run.phases_s["ep_comm"] = 0.5;
  f.run.step_time_s = 1.45;
  v = validate::compare_run("mixtral", f.plan, f.predicted, f.run);
  CHECK_FALSE(v.within_bounds);
  CHECK(v.worst_phase == "ep_comm");
  // Measured nothing where something was predicted: no relative error.
  f.run.phases_s["optimizer"] = 0.0;
  v = validate::compare_run("mixtral", f.plan, f.predicted, f.run);
  CHECK_FALSE(v.phases[5].error_defined);
}

TEST_CASE("compare: a run of another proxy is refused") {
  Fixture f;
  f.run.gpu = "h200-sxm";
  CHECK_THROWS_WITH_AS((void)validate::compare_run("m", f.plan, f.predicted, f.run),
                       doctest::Contains("another GPU type"), InputError);
  f.run.gpu = "h100-sxm";
  f.run.layers = 3;
  CHECK_THROWS_WITH_AS((void)validate::compare_run("m", f.plan, f.predicted, f.run), doctest::Contains("layer count"),
                       InputError);
  f.run.layers = 2;
  f.run.gpus = 4;
  CHECK_THROWS_WITH_AS((void)validate::compare_run("m", f.plan, f.predicted, f.run), doctest::Contains("GPU count"),
                       InputError);
}
