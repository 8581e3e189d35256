// moesim.validation-workload/1 (what the proxy runner runs) and moesim.validation-measured/1 (what it
// writes back): each writer's text loads back unchanged, and the workload loader is strict.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../scratch_files.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/measured_run_loader.hpp"
#include "config/validation_workload_loader.hpp"
#include "core/error.hpp"
#include "report/validation_json.hpp"
#include "report/validation_workload_json.hpp"
#include "validate/proxy.hpp"
#include "validate/workload.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {

std::string write(const std::string& name, const std::string& text) {
  return test::write_scratch("moesim_test_validation_workload", name, text);
}

std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  return test::replaced_once(text, from, to);
}

/// A small workload by hand: 2 sources of 4 tokens, top-2 over 4 experts (rows of 8, entries <= 4).
ValidationWorkload small() {
  ValidationWorkload w;
  w.scenario = "unit test";
  w.gpu = "h200-sxm";
  w.precision = "fp8";
  w.recompute = "selective";
  w.recompute_modules = {"core_attn", "moe_act"};
  w.attention = "flash";
  w.gpus = 2;
  w.tp = 1;
  w.ep = 2;
  w.dp = 2;
  w.layers = 1;
  w.microbatches = 2;
  w.steps = 7;
  w.warmup = 1;
  w.micro_batch_size = 1;
  w.seq = 4;
  w.tokens_per_rank = 4;
  w.hidden = 64;
  w.heads = 4;
  w.kv_heads = 2;
  w.head_dim = 16;
  w.gated = true;
  w.moe = true;
  w.experts = 4;
  w.topk = 2;
  w.expert_ffn = 32;
  w.shared_ffn = 16;
  w.router_scoring = "sigmoid";
  w.seed = 42;
  w.routed_copies = {{{{4, 2, 1, 1}, {0, 4, 3, 1}}, {{2, 2, 2, 2}, {2, 2, 2, 2}}}};
  return w;
}

void check_same(const ValidationWorkload& a, const ValidationWorkload& b) {
  CHECK(a.scenario == b.scenario);
  CHECK(a.gpu == b.gpu);
  CHECK(a.precision == b.precision);
  CHECK(a.recompute == b.recompute);
  CHECK(a.recompute_modules == b.recompute_modules);
  CHECK(a.attention == b.attention);
  CHECK(a.gpus == b.gpus);
  CHECK(a.tp == b.tp);
  CHECK(a.ep == b.ep);
  CHECK(a.dp == b.dp);
  CHECK(a.layers == b.layers);
  CHECK(a.microbatches == b.microbatches);
  CHECK(a.steps == b.steps);
  CHECK(a.warmup == b.warmup);
  CHECK(a.micro_batch_size == b.micro_batch_size);
  CHECK(a.seq == b.seq);
  CHECK(a.tokens_per_rank == b.tokens_per_rank);
  CHECK(a.hidden == b.hidden);
  CHECK(a.heads == b.heads);
  CHECK(a.kv_heads == b.kv_heads);
  CHECK(a.head_dim == b.head_dim);
  CHECK(a.q_lora_rank == b.q_lora_rank);
  CHECK(a.kv_lora_rank == b.kv_lora_rank);
  CHECK(a.qk_rope_head_dim == b.qk_rope_head_dim);
  CHECK(a.v_head_dim == b.v_head_dim);
  CHECK(a.gated == b.gated);
  CHECK(a.moe == b.moe);
  CHECK(a.ffn == b.ffn);
  CHECK(a.experts == b.experts);
  CHECK(a.topk == b.topk);
  CHECK(a.expert_ffn == b.expert_ffn);
  CHECK(a.shared_ffn == b.shared_ffn);
  CHECK(a.router_scoring == b.router_scoring);
  CHECK(a.seed == b.seed);
  CHECK(a.routed_copies == b.routed_copies);
}

}  // namespace

TEST_CASE("validation workload: writer -> loader round trip, by hand and from a proxy") {
  const ValidationWorkload w = small();
  const std::string text = report::validation_workload_to_json_text(w);
  CHECK(text.starts_with("{\n  \"schema\": \"moesim.validation-workload/1\",\n  \"scenario\""));
  CHECK(text == report::validation_workload_to_json_text(w));  // deterministic
  check_same(config::load_validation_workload(write("small.json", text)), w);

  validate::ProxyOptions o;
  o.gpus = 4;
  o.layers = 2;
  const ValidationWorkload skewed = validate::make_workload(
      validate::plan_proxy(config::load_scenario_argument("custom-moe-lognormal-gb200"), o), 20, 5);
  check_same(config::load_validation_workload(write("skewed.json", report::validation_workload_to_json_text(skewed))),
             skewed);

  ValidationWorkload dense = small();
  dense.moe = false;
  dense.ffn = 256;
  dense.experts = dense.topk = dense.expert_ffn = dense.shared_ffn = 0;
  dense.routed_copies.clear();
  dense.recompute = "none";
  dense.recompute_modules.clear();
  const std::string dense_text = report::validation_workload_to_json_text(dense);
  CHECK(dense_text.find("\"routed_copies\": []") != std::string::npos);
  check_same(config::load_validation_workload(write("dense.json", dense_text)), dense);

  ValidationWorkload mla = small();
  mla.kv_heads = mla.heads;
  mla.q_lora_rank = 48;
  mla.kv_lora_rank = 32;
  mla.qk_rope_head_dim = 8;
  mla.v_head_dim = 12;
  check_same(config::load_validation_workload(write("mla.json", report::validation_workload_to_json_text(mla))), mla);
}

TEST_CASE("validation workload: multi-latent attention fields are checked") {
  ValidationWorkload mla = small();
  mla.kv_heads = mla.heads;
  mla.kv_lora_rank = 32;
  mla.qk_rope_head_dim = 8;
  mla.v_head_dim = 12;
  const std::string good = report::validation_workload_to_json_text(mla);
  const std::string gqa = replaced(good, "\"kv_heads\": 4", "\"kv_heads\": 2");
  CHECK_THROWS_WITH_AS((void)config::load_validation_workload(write("mla-gqa.json", gqa)),
                       doctest::Contains("gives every head its own key and value"), InputError);
  const std::string rope = replaced(good, "\"qk_rope_head_dim\": 8", "\"qk_rope_head_dim\": 16");
  CHECK_THROWS_WITH_AS((void)config::load_validation_workload(write("mla-rope.json", rope)),
                       doctest::Contains("/qk_rope_head_dim"), InputError);
  const std::string stray = replaced(report::validation_workload_to_json_text(small()), "\"v_head_dim\": 0",
                                     "\"v_head_dim\": 64");
  CHECK_THROWS_WITH_AS((void)config::load_validation_workload(write("mla-stray.json", stray)),
                       doctest::Contains("need kv_lora_rank > 0"), InputError);
}

TEST_CASE("validation workload: malformed files are refused with the file, path, value and rule") {
  const std::string good = report::validation_workload_to_json_text(small());
  auto refused = [](const std::string& name, const std::string& text, const std::string& needle) {
    CAPTURE(name);
    const std::string path = write(name, text);
    CHECK_THROWS_WITH_AS((void)config::load_validation_workload(path), doctest::Contains(needle.c_str()), InputError);
    CHECK_THROWS_WITH_AS((void)config::load_validation_workload(path), doctest::Contains(name.c_str()), InputError);
  };
  refused("schema.json", replaced(good, "moesim.validation-workload/1", "moesim.validation-measured/1"),
          "not a validation workload");
  refused("unknown-key.json", replaced(good, "\"warmup\"", "\"warm_up\""), "unknown key 'warm_up'");
  refused("missing-key.json", replaced(good, "  \"seed\": 42,\n", ""), "/seed");
  refused("wrong-type.json", replaced(good, "\"gated\": true", "\"gated\": 1"), "/gated");
  refused("negative.json", replaced(good, "\"warmup\": 1", "\"warmup\": -1"), "/warmup");
  refused("negative-copies.json", replaced(good, "[4,2,1,1]", "[4,3,2,-1]"), "/routed_copies/0/0/0/3");
  refused("above-tokens.json", replaced(good, "[4,2,1,1]", "[5,1,1,1]"), "/routed_copies/0/0/0/0");
  refused("row-sum.json", replaced(good, "[4,2,1,1]", "[4,2,1,0]"), "a source routes tokens_per_rank × topk copies");
  refused("row-sum-path.json", replaced(good, "[4,2,1,1]", "[4,2,1,0]"), "/routed_copies/0/0/0: value sum 7");
  refused("short-row.json", replaced(good, "[4,2,1,1]", "[4,2,2]"), "one count per expert");
  refused("sources.json", replaced(good, "[4,2,1,1],\n        [0,4,3,1]", "[4,2,1,1]"), "one row per source");
  refused("layers.json", replaced(good, "\"layers\": 1", "\"layers\": 2"), "one entry per layer");
  refused("precision.json", replaced(good, "\"fp8\"", "\"fp16\""), "/precision");
  refused("modules.json", replaced(good, "\"moe_act\"", "\"attention\""), "/recompute_modules/1");
  refused("no-modules.json", replaced(good, R"(["core_attn","moe_act"])", "[]"),
          "selective recompute needs the modules");
  refused("dp.json", replaced(good, "\"dp\": 2", "\"dp\": 1"), "gpus = tp × dp");
  refused("tokens.json", replaced(good, "\"tokens_per_rank\": 4", "\"tokens_per_rank\": 3"), "/tokens_per_rank");
  refused("kv-heads.json", replaced(good, "\"kv_heads\": 2", "\"kv_heads\": 3"), "kv_heads must divide heads");
  refused("topk.json", replaced(good, "\"topk\": 2", "\"topk\": 5"), "/topk");
  refused("ffn.json", replaced(good, "\"ffn\": 0", "\"ffn\": 128"), "an MoE stack has no dense MLP");
  refused("not-json.json", "{", "malformed JSON");
}

TEST_CASE("measured run: measured_run_to_json_text loads back through config::load_measured_run") {
  MeasuredRun m;
  m.source = "moesim-validate-run 1 (unit test) \"quoted\"";
  m.gpu = "h200-sxm";
  m.gpus = 8;
  m.layers = 4;
  m.steps = 20;
  m.warmup = 5;
  m.step_time_s = 0.123456789012345;
  m.phases_s = {{"attention", 0.0321}, {"mlp", 0.0712}, {"ep_comm", 1.0 / 3.0}, {"dp_comm", 0.004}};
  m.peak_memory_bytes = 61234567890.0;
  const std::string text = report::measured_run_to_json_text(m);
  CHECK(text.starts_with("{\n  \"schema\": \"moesim.validation-measured/1\""));
  const MeasuredRun back = config::load_measured_run(write("measured.json", text));
  CHECK(back.source == m.source);
  CHECK(back.gpu == m.gpu);
  CHECK(back.gpus == m.gpus);
  CHECK(back.layers == m.layers);
  CHECK(back.steps == m.steps);
  CHECK(back.warmup == m.warmup);
  CHECK(back.step_time_s == m.step_time_s);  // exactly: the writer prints round-trip digits
  CHECK(back.peak_memory_bytes == m.peak_memory_bytes);
  REQUIRE(back.phases_s.size() == validation_phases().size());
  for (const std::string& name : validation_phases()) {
    const auto it = m.phases_s.find(name);
    CHECK(back.phases_s.at(name) == (it == m.phases_s.end() ? 0.0 : it->second));
  }
}
