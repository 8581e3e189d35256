// The scenario loader: the spec's examples load with every default filled in, the echo written by
// report/ loads back to the same scenario, and the cross-field rules hold for hand-built scenarios.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "../test_paths.hpp"
#include "config/json_reader.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"
#include "report/result_json.hpp"
#include "report/scenario_json.hpp"

namespace fs = std::filesystem;
using namespace moesim;
using config::Json;

namespace {

fs::path examples_dir() { return moesim::test::shared_dir() / "spec" / "examples"; }

bool have_examples() {
  if (fs::exists(examples_dir())) return true;
  MESSAGE("skipped: " << examples_dir().string() << " not found");
  return false;
}

Scenario load_example(const char* name) { return config::load_scenario_file((examples_dir() / name).string()); }

/// A small valid MoE scenario; tests change one field at a time.
Json small_scenario() {
  return Json::parse(R"({
    "model": {"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "ffn_hidden_size": 4096, "vocab_size": 32000, "num_moe_experts": 8, "moe_router_topk": 2,
              "moe_ffn_hidden_size": 1024},
    "system": {"preset": "hgx-h100", "gpus": 16},
    "training": {"seq_length": 4096, "global_batch_size": 64}
  })");
}

Scenario parse(const Json& j) { return config::parse_scenario(j, "inline.json", "."); }

std::string refusal(const Json& j) {
  try {
    (void)parse(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string echo_text(const Scenario& s) { return report::scenario_to_json(s).dump(2); }

}  // namespace

TEST_CASE("the Mixtral example loads with its defaults filled in") {
  if (!have_examples()) return;
  const Scenario s = load_example("mixtral-8x7b-h100-64.json");
  CHECK(s.name == "Mixtral 8x7B on 64 H100, BF16");
  CHECK(s.model_ref == "mixtral-8x7b");
  CHECK(s.model.num_moe_experts == 8);
  CHECK(s.model.moe_router_topk == 2);
  CHECK(s.system.name == "hgx-h100");
  CHECK(s.system.gpu.name == "h100-sxm");
  CHECK(s.system.gpus == 64);
  CHECK(s.parallel.tp == 1);
  CHECK(s.parallel.pp == 4);
  CHECK(s.parallel.vpp == 8);
  CHECK(s.parallel.ep == 8);
  CHECK(s.parallel.etp == 1);
  CHECK(s.parallel.dp == 16);
  CHECK_FALSE(s.parallel.sequence_parallel);
  CHECK_FALSE(s.parallel.tp_comm_overlap);
  CHECK(s.parallel.edp(s.system.gpus) == 2);
  CHECK(s.num_microbatches() == 16);
  CHECK(s.precision == Precision::kBf16);
  CHECK(s.recompute.granularity == RecomputeGranularity::kNone);
  CHECK(s.moe.dispatcher == Dispatcher::kAlltoall);
  CHECK_FALSE(s.moe.capacity_factor.has_value());
  CHECK(s.moe.routing.distribution == RoutingDistribution::kBalanced);
  CHECK(s.moe.grouped_gemm);
  CHECK(s.optimizer.distributed);
  CHECK(s.seed == 0);
  CHECK(s.flops_convention == model::FlopsConvention::kMegatron);
  CHECK(s.attention_backend == AttentionBackend::kFlash);
  CHECK(s.training.micro_batch_size == 1);
  CHECK(s.profile.empty());
}

TEST_CASE("the ESM-2 MoE example loads: encoder, fp8, selective recompute, zipf routing") {
  if (!have_examples()) return;
  const Scenario s = load_example("esm2-15b-moe-h200.json");
  CHECK(s.model_ref.empty());
  CHECK_FALSE(s.model.causal);
  CHECK_FALSE(s.model.gated_linear_unit);
  CHECK(s.model.num_query_groups == 40);
  CHECK(s.model.kv_channels == 128);
  CHECK(s.system.gpu.name == "h200-sxm");
  CHECK(s.parallel.dp == 8);
  CHECK(s.parallel.sequence_parallel);  // default when tp > 1
  CHECK(s.parallel.etp == 1);
  CHECK(s.precision == Precision::kFp8);
  CHECK(s.recompute.granularity == RecomputeGranularity::kSelective);
  CHECK(s.recompute.modules == std::vector<RecomputeModule>{RecomputeModule::kCoreAttn});
  CHECK(s.recompute.has(RecomputeModule::kCoreAttn));
  CHECK_FALSE(s.recompute.has(RecomputeModule::kMoeAct));
  REQUIRE(s.moe.capacity_factor.has_value());
  CHECK(*s.moe.capacity_factor == 1.25);
  CHECK(s.moe.routing.distribution == RoutingDistribution::kZipf);
  CHECK(s.moe.routing.zipf_s == 0.8);
  CHECK(s.num_microbatches() == 64);
}

TEST_CASE("the GB200 example loads: NVL72, mxfp8, moe_act recompute, lognormal routing") {
  if (!have_examples()) return;
  const Scenario s = load_example("custom-moe-lognormal-gb200.json");
  CHECK(s.system.name == "gb200-nvl72");
  CHECK(s.system.gpus_per_node == 4);
  CHECK(s.system.nvlink_domain_size == 72);
  CHECK(s.precision == Precision::kMxfp8);
  CHECK(s.recompute.modules == std::vector<RecomputeModule>{RecomputeModule::kMoeAct});
  CHECK(s.moe.routing.distribution == RoutingDistribution::kLognormal);
  CHECK(s.moe.routing.lognormal_sigma == 0.6);
  CHECK(s.moe.routing.per_step_variation);
  CHECK_FALSE(s.moe.routing.per_layer_variation);
  CHECK(s.seed == 7);
  CHECK(s.parallel.dp == 72);
  CHECK(s.parallel.edp(72) == 9);
  CHECK_FALSE(s.model.layer_is_moe(0));  // first_k_dense = 1
  CHECK(s.model.layer_is_moe(1));
  CHECK(s.model.num_moe_layers() == 31);
}

TEST_CASE("the scenario echo loads back to the same scenario and the same text") {
  if (!have_examples()) return;
  for (const char* name : {"mixtral-8x7b-h100-64.json", "esm2-15b-moe-h200.json", "custom-moe-lognormal-gb200.json"}) {
    CAPTURE(name);
    const Scenario s = load_example(name);
    const std::string first = echo_text(s);
    const Scenario again = config::parse_scenario(Json::parse(first), "echo.json", examples_dir());
    CHECK(again.model == s.model);
    CHECK(again.system.name == s.system.name);
    CHECK(again.system.gpu.name == s.system.gpu.name);
    CHECK(again.parallel.dp == s.parallel.dp);
    CHECK(again.parallel.sequence_parallel == s.parallel.sequence_parallel);
    CHECK(again.recompute.modules == s.recompute.modules);
    CHECK(again.moe.capacity_factor == s.moe.capacity_factor);
    CHECK(again.seed == s.seed);
    CHECK(echo_text(again) == first);
  }
}

TEST_CASE("the echo keeps overrides: GPU type, profile, routing parameters, attention backend, convention") {
  fs::current_path(test::source_dir());  // the profile path is relative to the scenario's folder, "."
  Json j = small_scenario();
  j["system"]["gpu"] = "h200-sxm";
  j["system"]["profile"] = "tests/profile/data/h200-synthetic.json";
  j["training"]["attention_backend"] = "unfused";
  j["flops_convention"] = "full-s2";
  j["moe"] = Json::parse(R"({"dispatcher": "deepep", "grouped_gemm": false,
      "routing": {"distribution": "dirichlet", "alpha": 0.3, "per_layer_variation": true, "device_limited_nodes": 2}})");
  j["recompute"] = "full";
  j["parallel"] = Json::parse(R"({"tp": 2, "ep": 4, "tp_comm_overlap": true})");
  j["seed"] = 123456789012345;
  const Scenario s = parse(j);
  CHECK(s.system.name == "hgx-h100");
  CHECK(s.system.gpu.name == "h200-sxm");
  CHECK(s.profile == "tests/profile/data/h200-synthetic.json");
  REQUIRE(s.calibration);
  CHECK(s.calibration->provenance.gpu == "h200-sxm");
  CHECK(s.attention_backend == AttentionBackend::kUnfused);
  CHECK(s.flops_convention == model::FlopsConvention::kFullS2);
  CHECK(s.moe.dispatcher == Dispatcher::kDeepep);
  CHECK_FALSE(s.moe.grouped_gemm);
  CHECK(s.moe.routing.dirichlet_alpha == 0.3);
  CHECK(s.moe.routing.device_limited_nodes == 2);
  CHECK(s.recompute.has(RecomputeModule::kMlp));  // full recompute replays every module
  CHECK(s.parallel.etp == 2);     // Megatron: expert TP defaults to TP
  CHECK(s.parallel.tp_comm_overlap);
  CHECK(s.seed == 123456789012345u);
  const Json echo = report::scenario_to_json(s);
  CHECK(echo["system"] == Json::parse(R"({"preset": "hgx-h100", "gpus": 16, "gpu": "h200-sxm",
                                          "profile": "tests/profile/data/h200-synthetic.json"})"));
  CHECK(echo["recompute"] == Json::parse(R"({"granularity": "full"})"));
  CHECK(echo["moe"]["capacity_factor"].is_null());
  CHECK(echo["moe"]["routing"]["alpha"] == 0.3);
  CHECK(echo["training"]["attention_backend"] == "unfused");
  CHECK(echo["flops_convention"] == "full-s2");
  const Scenario again = parse(echo);
  CHECK(echo_text(again) == echo.dump(2));
}

TEST_CASE("defaults of a minimal scenario") {
  const Scenario s = parse(small_scenario());
  CHECK(s.name.empty());
  CHECK(s.file == "inline.json");
  CHECK(s.parallel.tp == 1);
  CHECK(s.parallel.dp == 16);
  CHECK(s.parallel.etp == 1);
  CHECK(s.training.micro_batch_size == 1);
  CHECK(s.precision == Precision::kBf16);
  CHECK(s.recompute.granularity == RecomputeGranularity::kNone);
  CHECK_FALSE(s.recompute.has(RecomputeModule::kCoreAttn));
  CHECK(s.optimizer.overlap_grad_reduce);
  CHECK(s.optimizer.overlap_param_gather);
  CHECK(s.optimizer.grad_reduce_in_fp32);  // Megatron-LM's default under bf16
  CHECK_FALSE(s.optimizer.fp4_param_gather);
  CHECK(s.moe.routing.distribution == RoutingDistribution::kBalanced);
  CHECK(s.system.gpu.name == "h100-sxm");
}

TEST_CASE("optimizer: grad_reduce_in_fp32 and fp4_param_gather are read and echoed") {
  Json j = small_scenario();
  j["system"] = Json::parse(R"({"preset": "dgx-b200", "gpus": 16})");
  j["precision"] = "nvfp4";
  j["optimizer"] = Json::parse(R"({"grad_reduce_in_fp32": false, "fp4_param_gather": true})");
  const Scenario s = parse(j);
  CHECK_FALSE(s.optimizer.grad_reduce_in_fp32);
  CHECK(s.optimizer.fp4_param_gather);
  const Json echo = Json::parse(echo_text(s));
  CHECK(echo["optimizer"]["grad_reduce_in_fp32"] == false);
  CHECK(echo["optimizer"]["fp4_param_gather"] == true);
}

TEST_CASE("runtime: defaults from Megatron-Core and the system, overrides read and echoed back") {
  const Scenario eager = parse(small_scenario());
  CHECK(eager.runtime.cuda_graph.empty());
  CHECK(eager.runtime.host.kind == hw::HostKind::kX86);  // hgx-h100: an x86 host
  CHECK_FALSE(eager.runtime.host.relative_speed.has_value());
  CHECK(eager.runtime.fusions ==
        std::vector<Fusion>(kMegatronDefaultFusions.begin(), kMegatronDefaultFusions.end()));
  CHECK(Json::parse(echo_text(eager))["runtime"]["cuda_graph"] == "none");

  Json grace = small_scenario();
  grace["system"] = Json::parse(R"({"preset": "gb200-nvl72", "gpus": 16})");
  CHECK(parse(grace).runtime.host.kind == hw::HostKind::kGrace);  // the rack's Grace CPUs

  Json j = small_scenario();
  j["runtime"] = Json::parse(R"({"cuda_graph": ["attn", "moe_router", "moe_preprocess"], "host": 1.5,
                                 "fusions": ["moe_permute", "moe_router"]})");
  const Scenario s = parse(j);
  CHECK(s.runtime.cuda_graph ==
        std::vector<CudaGraphScope>{CudaGraphScope::kAttn, CudaGraphScope::kMoeRouter, CudaGraphScope::kMoePreprocess});
  CHECK(s.runtime.host.kind == hw::HostKind::kX86);
  CHECK(s.runtime.host.relative_speed == 1.5);
  CHECK(s.runtime.fusions == std::vector<Fusion>{Fusion::kMoePermute, Fusion::kMoeRouter});
  const Json echo = Json::parse(echo_text(s));
  CHECK(echo["runtime"]["host"] == 1.5);
  CHECK(echo["runtime"]["fusions"] == Json::parse(R"(["moe_permute", "moe_router"])"));
  CHECK(echo_text(parse(echo)) == echo_text(s));

  Json none = small_scenario();
  none["runtime"] = Json::parse(R"({"fusions": [], "host": "grace", "cuda_graph": "none"})");
  const Scenario bare = parse(none);
  CHECK(bare.runtime.fusions.empty());
  CHECK(bare.runtime.host.kind == hw::HostKind::kGrace);
  CHECK(bare.runtime.cuda_graph.empty());

  // A whole-layer graph of an MoE layer needs fixed shapes: drop-and-pad, not dropless.
  Json layer = small_scenario();
  layer["runtime"] = Json::parse(R"({"cuda_graph": ["layer"]})");
  CHECK(refusal(layer) ==
        "inline.json: at /runtime/cuda_graph: value [\"layer\"]: layer graphs of MoE layers need fixed shapes: "
        "drop-and-pad (moe.capacity_factor with pad_to_capacity); this run is dropless; allowed: moe_router, "
        "moe_preprocess, attn, full_iteration, or set moe.capacity_factor and pad_to_capacity");
  layer["moe"] = Json::parse(R"({"capacity_factor": 1.0, "pad_to_capacity": true})");
  CHECK(parse(layer).runtime.cuda_graph == std::vector<CudaGraphScope>{CudaGraphScope::kLayer});
}

TEST_CASE("recompute spellings") {
  Json j = small_scenario();
  j["recompute"] = "selective";
  CHECK(parse(j).recompute.modules == std::vector<RecomputeModule>{RecomputeModule::kCoreAttn});
  j["recompute"] = Json::parse(R"({"granularity": "selective", "modules": ["moe_act", "layernorm", "mla_up_proj"]})");
  const auto r = parse(j).recompute;
  CHECK(r.has(RecomputeModule::kLayernorm));
  CHECK_FALSE(r.has(RecomputeModule::kCoreAttn));
  j["recompute"] = Json::parse(R"({"granularity": "selective", "modules": []})");
  CHECK(refusal(j) ==
        "inline.json: at /recompute/modules: value []: selective recompute needs at least one module (use \"none\" "
        "for no recompute); allowed: core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts");
  j["recompute"] = Json::parse(R"({"granularity": "selective", "modules": ["moe_act", "moe_act"]})");
  CHECK(refusal(j) ==
        "inline.json: at /recompute/modules/1: value \"moe_act\": module listed twice; allowed: core_attn, moe_act, "
        "layernorm, mla_up_proj, mlp, moe, shared_experts");
  j["recompute"] = 1;
  CHECK(refusal(j) == "inline.json: at /recompute: value 1: expected a string or {\"granularity\", \"modules\"}, got "
                      "an integer; allowed: none, selective, full");
}

TEST_CASE("routing parameters belong to their distribution") {
  Json j = small_scenario();
  j["moe"] = Json::parse(R"({"routing": {"distribution": "lognormal"}})");
  CHECK(refusal(j) == "inline.json: at /moe/routing/sigma: required field is missing");
  j["moe"] = Json::parse(R"({"routing": {"distribution": "lognormal", "sigma": 0}})");
  CHECK(parse(j).moe.routing.lognormal_sigma == 0.0);  // sigma 0 is balanced-in-expectation, allowed
  j["moe"] = Json::parse(R"({"routing": {"distribution": "dirichlet", "alpha": 0}})");
  CHECK(refusal(j) == "inline.json: at /moe/routing/alpha: value 0: out of range; allowed: numbers > 0 and <= 1000000");
  j["moe"] = Json::parse(R"({"routing": {"distribution": "balanced", "alpha": 1}})");
  CHECK(refusal(j) == "inline.json: at /moe/routing/alpha: value 1: 'alpha' is the parameter of the dirichlet "
                      "distribution, not of balanced; allowed: distribution, per_layer_variation, per_step_variation, "
                      "device_limited_nodes");
  j["moe"] = Json::parse(R"({"routing": {"distribution": "pareto"}})");
  CHECK(refusal(j) == "inline.json: at /moe/routing/distribution: value \"pareto\": unknown value; allowed: balanced, "
                      "uniform, zipf, lognormal, dirichlet, histogram");
}

TEST_CASE("a histogram file is kept as written and must exist beside the scenario") {
  const fs::path dir = fs::temp_directory_path() / "moesim_test_histogram";
  fs::create_directories(dir);
  {
    std::FILE* f = std::fopen((dir / "hist.csv").string().c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("layer,expert,tokens\n", f);
    // A complete histogram of the test model (8 MoE layers × 8 experts): the loader is strict.
    for (int l = 0; l < 8; ++l) {
      for (int e = 0; e < 8; ++e) std::fprintf(f, "%d,%d,1\n", l, e);
    }
    std::fclose(f);
  }
  Json j = small_scenario();
  j["moe"] = Json::parse(R"({"routing": {"distribution": "histogram", "file": "hist.csv"}})");
  const Scenario s = config::parse_scenario(j, "s.json", dir);
  CHECK(s.moe.routing.histogram_file == "hist.csv");
  CHECK(report::scenario_to_json(s)["moe"]["routing"]["file"] == "hist.csv");
  fs::remove_all(dir);
}

TEST_CASE("validate_layout refuses hand-built layouts with the field, value and rule") {
  const Scenario ok = parse(small_scenario());
  auto refused = [](const Scenario& s) -> std::string {
    try {
      validate_layout(s);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(refused(ok).empty());

  Scenario zero = ok;
  zero.parallel.pp = 0;
  CHECK(refused(zero) == "at /parallel/pp: value 0: pp must be at least 1; allowed: integers >= 1");

  Scenario heads = ok;
  heads.parallel.tp = 8;
  CHECK(refused(heads) == "at /parallel/tp: value 8: tp must divide model.num_query_groups (4); allowed: 1, 2, 4");

  Scenario dense = ok;
  dense.model.moe_layer_pattern.assign(8, true);
  dense.model.moe_layer_pattern[0] = false;  // one dense layer: its FFN is TP-sharded too
  dense.model.ffn_hidden_size = 4098;
  dense.parallel.tp = 4;
  dense.parallel.dp = 4;
  CHECK(refused(dense) ==
        "at /parallel/tp: value 4: tp must divide model.ffn_hidden_size (4098) of the dense layers; allowed: 1, 2");

  Scenario precision = ok;
  precision.precision = Precision::kMxfp8;
  CHECK(refused(precision) ==
        "at /precision: value \"mxfp8\": GPU h100-sxm does not support mxfp8; allowed: bf16, fp16, fp8, fp8-blockwise");

  Scenario batch = ok;
  batch.training.micro_batch_size = 8;
  CHECK(refused(batch) == "at /training/global_batch_size: value 64: global_batch_size must be divisible by "
                          "micro_batch_size·dp (8·16 = 128); allowed: multiples of 128");

  Scenario uneven = ok;  // 8 layers over pp 3: uneven stages are the estimator's business
  uneven.system.gpus = 24;
  uneven.parallel.pp = 3;
  uneven.parallel.dp = 8;
  uneven.training.global_batch_size = 64;
  CHECK(refused(uneven).empty());
}

TEST_CASE("to_string spellings are the scenario's") {
  CHECK(to_string(RecomputeGranularity::kSelective) == "selective");
  CHECK(to_string(Dispatcher::kHybridep) == "hybridep");
  CHECK(to_string(Dispatcher::kAllgather) == "allgather");
  CHECK(to_string(RoutingDistribution::kLognormal) == "lognormal");
  CHECK(to_string(RoutingDistribution::kHistogram) == "histogram");
  CHECK(to_string(AttentionBackend::kUnfused) == "unfused");
  CHECK(to_string(AttentionBackend::kFlash) == "flash");
}
