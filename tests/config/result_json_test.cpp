// The result writer: every field the contract requires, deterministic text, a re-loadable scenario
// echo and a model definition that parse_model_definition reads back unchanged.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "config/model_loader.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"
#include "report/result_json.hpp"
#include "report/scenario_json.hpp"

using namespace moesim;
using config::Json;

namespace {

Scenario small() {
  return config::parse_scenario(Json::parse(R"({
    "name": "writer test",
    "model": {"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "ffn_hidden_size": 4096,
              "vocab_size": 32000, "num_moe_experts": 8, "moe_router_topk": 2, "moe_ffn_hidden_size": 1024,
              "first_k_dense": 1},
    "system": {"preset": "hgx-h100", "gpus": 8},
    "training": {"seq_length": 4096, "global_batch_size": 32},
    "parallel": {"ep": 8},
    "seed": 5
  })"),
                                "w.json", ".");
}

Result sample_result() {
  Result r;
  r.scenario = small();
  r.step_time_s = 1.5;
  r.tokens_per_s = 32.0 * 4096 / 1.5;
  r.tokens_per_s_per_gpu = r.tokens_per_s / 8;
  r.model_flops_per_step = 1.25e15;
  r.model_tflops_per_gpu = 1.25e15 / 1.5 / 8 / 1e12;
  r.mfu = r.model_tflops_per_gpu / 989;
  r.params.total = 1e9;
  r.params.active = 3e8;
  r.layout = {8, 1, 4, 1, {4}};
  r.memory.peak_bytes = 4.25e10;
  r.memory.capacity_bytes = 80 * 1073741824.0;
  r.memory.per_stage.push_back({0, 2e9, 4e9, 8e9, 2.5e10, 3.5e9, 4.25e10, "forward of micro-batch 3, chunk 0, layer 3 (MoE)"});
  r.breakdown.compute = 1.2;
  r.breakdown.ep_comm = 0.2;
  r.breakdown.exposed_comm = 0.2;
  r.breakdown.optimizer = 0.1;
  r.breakdown.moe_imbalance = 1.07;
  r.warnings = {"fell back to roofline for grouped GEMM"};
  r.seed = 5;
  r.moesim_version = "0.1.0";
  return r;
}

}  // namespace

TEST_CASE("the result carries every required field of moesim.result/1") {
  const Json j = report::result_to_json(sample_result());
  CHECK(j["schema"] == "moesim.result/1");
  for (const char* key : {"scenario", "fidelity", "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu",
                          "model_tflops_per_gpu", "mfu", "flops_convention", "memory", "breakdown", "warnings", "seed",
                          "moesim_version", "params", "layout", "model_flops_per_step"}) {
    CAPTURE(key);
    CHECK(j.contains(key));
  }
  CHECK(j["fidelity"] == "estimate");
  CHECK(j["flops_convention"] == "megatron");
  CHECK(j["step_time_s"] == 1.5);
  CHECK(j["seed"] == 5);
  for (const char* key : {"peak_bytes", "capacity_bytes", "fits", "per_stage"}) CHECK(j["memory"].contains(key));
  const Json& stage = j["memory"]["per_stage"][0];
  for (const char* key :
       {"stage", "weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes", "peak_bytes"}) {
    CAPTURE(key);
    CHECK(stage.contains(key));
  }
  CHECK(stage["activations_bytes"] == 2.5e10);
  CHECK(stage["peak_op"] == "forward of micro-batch 3, chunk 0, layer 3 (MoE)");
  for (const char* key : {"compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "bubble", "exposed_comm",
                          "optimizer", "host_idle", "moe_imbalance"}) {
    CAPTURE(key);
    CHECK(j["breakdown"][key].is_number());
  }
  CHECK(j["breakdown"]["moe_imbalance"] == 1.07);
  CHECK(j["params"]["total"] == 1e9);
  CHECK(j["params"]["active"] == 3e8);
  CHECK(j["layout"] == Json::parse(R"({"dp": 8, "edp": 1, "num_microbatches": 4, "num_nodes": 1, "layers_per_stage": [4]})"));
  CHECK(j["warnings"] == Json::parse(R"(["fell back to roofline for grouped GEMM"])"));
  CHECK(j["scenario"]["schema"] == "moesim.scenario/1");
  CHECK(j["scenario"]["model"]["moe_layer_freq"] == Json::parse("[0, 1, 1, 1]"));
  CHECK(j["scenario"]["parallel"]["dp"] == 8);
}

TEST_CASE("the same result gives byte-identical text") {
  const std::string a = report::result_to_json_text(sample_result());
  const std::string b = report::result_to_json_text(sample_result());
  CHECK(a == b);
  CHECK(a.back() == '\n');
  CHECK(a.find("\n  \"breakdown\": {") != std::string::npos);  // 2-space indent
  Result other = sample_result();
  other.step_time_s = 1.75;
  CHECK(report::result_to_json_text(other) != a);
}

TEST_CASE("a result with a non-finite figure is a bug, not a null") {
  Result r = sample_result();
  r.mfu = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS((void)report::result_to_json(r), "result field mfu is not finite", InternalError);
  r = sample_result();
  r.memory.per_stage[0].peak_bytes = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS((void)report::result_to_json(r), InternalError);
}

TEST_CASE("the scenario echo inside a result loads back") {
  const Json j = report::result_to_json(sample_result());
  const Scenario again = config::parse_scenario(j["scenario"], "echo.json", ".");
  CHECK(again.model == sample_result().scenario.model);
  CHECK(again.name == "writer test");
  CHECK(again.seed == 5);
  CHECK(report::scenario_to_json(again) == j["scenario"]);
}

TEST_CASE("a measured host wait is echoed, loads back and has its breakdown category") {
  Result r = sample_result();
  r.scenario.moe.host_sync_idle_s = 0.0045;
  r.breakdown.host_idle = 0.25;
  const Json j = report::result_to_json(r);
  CHECK(j["scenario"]["moe"]["host_sync_idle_s"] == 0.0045);
  CHECK(j["breakdown"]["host_idle"] == 0.25);
  CHECK(report::result_to_json(sample_result())["scenario"]["moe"]["host_sync_idle_s"] == 0.0);
  const Scenario again = config::parse_scenario(j["scenario"], "echo.json", ".");
  CHECK(again.moe.host_sync_idle_s == 0.0045);
}

TEST_CASE("model_to_json is a full definition that parse_model_definition reads back") {
  for (const char* preset : {"deepseek-v3", "mixtral-8x7b", "llama-3-8b", "esm2-650m", "qwen3-30b-a3b"}) {
    CAPTURE(preset);
    const auto spec = config::load_model_preset(preset);
    const Json j = report::model_to_json(spec);
    CHECK(config::parse_model_definition(j, "/model") == spec);
    if (spec.is_moe()) {
      CHECK(j["moe_layer_freq"].size() == static_cast<std::size_t>(spec.num_layers));
    } else {
      CHECK_FALSE(j.contains("moe_layer_freq"));
    }
    CHECK(j.contains("multi_latent_attention") == spec.multi_latent_attention.has_value());
  }
}
