// Presets, full definitions, overrides and resolve_model_field, and the exact messages of bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "../test_paths.hpp"
#include "config/model_loader.hpp"
#include "core/embedded_files.hpp"
#include "core/error.hpp"
#include "model/counts.hpp"

using namespace moesim;
using config::Json;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

model::ModelSpec definition(const char* text) {
  return config::parse_model_definition(config::parse_json_text(text, "def.json"), "/model");
}

model::ModelSpec resolve(const char* text, std::string* ref = nullptr) {
  return config::resolve_model_field(config::parse_json_text(text, "scenario.json"), "/model",
                                     test::source_dir(), ref);
}

const char* kPresetList =
    "dbrx, deepseek-v3, esm2-15b, esm2-3b, esm2-650m, gpt3-175b, llama-3-70b, llama-3-8b, llama-3.1-405b, "
    "mixtral-8x22b, mixtral-8x7b, olmoe-1b-7b, qwen3-235b-a22b, qwen3-30b-a3b";

const char* kDefinitionKeys =
    "add_bias_linear, causal, ffn_hidden_size, first_k_dense, gated_linear_unit, hidden_dropout, hidden_size, kv_channels, "
    "moe_ffn_hidden_size, moe_layer_freq, moe_router_topk, moe_shared_expert_intermediate_size, mtp_num_layers, "
    "multi_latent_attention, name, num_attention_heads, num_layers, num_moe_experts, num_query_groups, "
    "share_embeddings_and_output_weights, sliding_window, sliding_window_pattern, source, vocab_size";

const char* kModelTypes =
    "dbrx, deepseek_v2, deepseek_v3, esm, kimi_k2, llama, llama4, llama4_text, mistral, mixtral, olmoe, phimoe, "
    "qwen2, qwen2_moe, qwen3, qwen3_moe";

}  // namespace

TEST_CASE("presets: one per embedded file, sorted, each naming itself and its source") {
  const auto names = config::model_preset_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  CHECK(joined == kPresetList);
  for (const auto& n : names) {
    const model::ModelSpec s = config::load_model_preset(n);
    INFO(n);
    CHECK(s.name == n);
    CHECK(s.source.size() > 20);
  }
  // Every preset file is read strictly: its raw JSON has only definition keys.
  for (const EmbeddedFile& f : embedded_files()) {
    if (!f.path.starts_with("src/model/presets/")) continue;
    const Json j = config::parse_json_text(std::string(f.content), std::string(f.path));
    CHECK_NOTHROW((void)config::parse_model_definition(j, ""));
  }
}

TEST_CASE("full definition: defaults of kv_channels, query groups, gating, causality and the MoE pattern") {
  const model::ModelSpec d = definition(R"({"num_layers": 4, "hidden_size": 1024, "num_attention_heads": 16,
      "ffn_hidden_size": 4096, "vocab_size": 1000})");
  CHECK(d.name == "custom");
  CHECK(d.kv_channels == 64);
  CHECK(d.num_query_groups == 16);
  CHECK(d.gated_linear_unit);
  CHECK(d.causal);
  CHECK_FALSE(d.is_moe());
  CHECK(d.moe_layer_pattern.empty());

  const model::ModelSpec m = definition(R"({"name": "toy", "num_layers": 6, "hidden_size": 1024,
      "num_attention_heads": 16, "num_query_groups": 4, "ffn_hidden_size": 4096, "vocab_size": 1000,
      "num_moe_experts": 8, "moe_router_topk": 2, "moe_layer_freq": 2, "first_k_dense": 1})");
  CHECK(m.name == "toy");
  CHECK(m.moe_ffn_hidden_size == 4096);  // defaults to ffn_hidden_size, as in Megatron
  // Megatron: layer i is MoE when i % 2 == 0; the first layer is forced dense.
  CHECK(m.moe_layer_pattern == std::vector<bool>{false, false, true, false, true, false});

  const model::ModelSpec list = definition(R"({"num_layers": 3, "hidden_size": 64, "num_attention_heads": 4,
      "ffn_hidden_size": 128, "vocab_size": 10, "num_moe_experts": 4, "moe_router_topk": 1,
      "moe_ffn_hidden_size": 32, "moe_layer_freq": [0, 1, 1], "sliding_window": 16, "sliding_window_pattern": 2,
      "causal": false, "gated_linear_unit": false, "add_bias_linear": true,
      "share_embeddings_and_output_weights": true})");
  CHECK(list.moe_layer_pattern == std::vector<bool>{false, true, true});
  CHECK(list.moe_ffn_hidden_size == 32);
  CHECK(list.sliding_window == 16);
  CHECK_FALSE(list.causal);

  const model::ModelSpec mla = definition(R"({"num_layers": 2, "hidden_size": 1000, "num_attention_heads": 8,
      "ffn_hidden_size": 100, "vocab_size": 10, "multi_latent_attention": {"kv_lora_rank": 64, "qk_head_dim": 32,
      "qk_pos_emb_head_dim": 16, "v_head_dim": 32}})");
  CHECK(mla.multi_latent_attention == model::MlaSpec{0, 64, 32, 16, 32});
  CHECK(mla.kv_channels == 32);  // 1000 / 8 is not a head dim; MLA's value heads are
  CHECK(mla.num_query_groups == 8);
}

TEST_CASE("invalid definitions and HF configs: exact messages") {
  struct Case {
    const char* what;
    std::function<void()> load;
    std::string message;
  };
  const std::string ok = R"("num_layers": 4, "hidden_size": 1024, "num_attention_heads": 32, "vocab_size": 1000)";
  auto def = [](std::string body) { return [body] { (void)definition(body.c_str()); }; };
  auto hf = [](std::string body) {
    return [body] { (void)config::import_hf_config(config::parse_json_text(body, "cfg.json"), "cfg.json"); };
  };
  const std::string llama =
      R"("model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
      "num_attention_heads": 32, "vocab_size": 128256)";
  const Case cases[] = {
      {"unknown key", def("{" + ok + R"(, "ffn_hidden_size": 4096, "num_layer": 3})"),
       std::string("at /model/num_layer: unknown key 'num_layer'; allowed: ") + kDefinitionKeys},
      {"wrong type", def(R"({"num_layers": "32", "hidden_size": 1024, "num_attention_heads": 32, "vocab_size": 10})"),
       "at /model/num_layers: value \"32\": expected an integer, got a string"},
      {"zero layers", def(R"({"num_layers": 0, "hidden_size": 1024, "num_attention_heads": 32, "vocab_size": 10})"),
       "at /model/num_layers: value 0: out of range; allowed: integers from 1 to 4096"},
      {"missing field", def(R"({"num_layers": 2, "num_attention_heads": 32, "vocab_size": 10})"),
       "at /model/hidden_size: required field is missing; allowed: integers from 1 to 1048576"},
      {"absurd hidden size",
       def(R"({"num_layers": 2, "hidden_size": 1000000000000, "num_attention_heads": 32, "vocab_size": 10})"),
       "at /model/hidden_size: value 1000000000000: out of range; allowed: integers from 1 to 1048576"},
      {"absurd experts", def("{" + ok + R"(, "num_moe_experts": 100000, "moe_router_topk": 2})"),
       "at /model/num_moe_experts: value 100000: out of range; allowed: integers from 0 to 65536"},
      {"heads not divisible by groups", def("{" + ok + R"(, "ffn_hidden_size": 4096, "num_query_groups": 3})"),
       "at /model/num_query_groups: value 3: num_attention_heads (32) must be divisible by num_query_groups; "
       "allowed: 1, 2, 4, 8, 16, 32"},
      {"topk above experts",
       def("{" + ok + R"(, "moe_ffn_hidden_size": 512, "num_moe_experts": 8, "moe_router_topk": 9})"),
       "at /model/moe_router_topk: value 9: moe_router_topk must be from 1 to num_moe_experts (8); allowed: "
       "integers from 1 to 8"},
      {"topk missing", def("{" + ok + R"(, "moe_ffn_hidden_size": 512, "num_moe_experts": 8})"),
       "at /model/moe_router_topk: required when num_moe_experts > 0; allowed: integers from 1 to 8"},
      {"dense without ffn", def("{" + ok + "}"),
       "at /model/ffn_hidden_size: value 0: the model has dense layers: ffn_hidden_size must be > 0; allowed: "
       "integers >= 1"},
      {"kv_channels not derivable",
       def(R"({"num_layers": 2, "hidden_size": 1000, "num_attention_heads": 3, "ffn_hidden_size": 10, "vocab_size": 10})"),
       "at /model/kv_channels: kv_channels is required when hidden_size (1000) is not divisible by "
       "num_attention_heads (3); allowed: integers from 1 to 65536"},
      {"pattern list length",
       def("{" + ok + R"(, "moe_ffn_hidden_size": 64, "num_moe_experts": 4, "moe_router_topk": 1, "moe_layer_freq": [1, 0]})"),
       "at /model/moe_layer_freq: value 2 entries: moe_layer_freq lists one entry per layer: num_layers is 4; "
       "allowed: 4 entries"},
      {"pattern list entry",
       def("{" + ok + R"(, "moe_ffn_hidden_size": 64, "num_moe_experts": 4, "moe_router_topk": 1, "moe_layer_freq": [1, 0, 2, 1]})"),
       "at /model/moe_layer_freq/2: value 2: out of range; allowed: integers from 0 to 1"},
      {"pattern type", def("{" + ok + R"(, "moe_ffn_hidden_size": 64, "num_moe_experts": 4, "moe_router_topk": 1, "moe_layer_freq": "1"})"),
       "at /model/moe_layer_freq: value \"1\": expected an integer or a list of 0/1 per layer, got a string"},
      {"first_k_dense beyond the layers",
       def("{" + ok + R"(, "ffn_hidden_size": 64, "num_moe_experts": 4, "moe_router_topk": 1, "first_k_dense": 5})"),
       "at /model/first_k_dense: value 5: first_k_dense must not exceed num_layers (4); allowed: integers from 0 to 4"},
      {"first_k_dense on a dense model", def("{" + ok + R"(, "ffn_hidden_size": 64, "first_k_dense": 1})"),
       "at /model/first_k_dense: value 1: first_k_dense needs num_moe_experts > 0"},
      {"window pattern without window", def("{" + ok + R"(, "ffn_hidden_size": 64, "sliding_window_pattern": 2})"),
       "at /model/sliding_window_pattern: value 2: sliding_window_pattern needs a sliding_window; allowed: 0 "
       "without a sliding_window"},
      {"MLA field missing", def("{" + ok + R"(, "ffn_hidden_size": 64, "multi_latent_attention": {"kv_lora_rank": 64}})"),
       "at /model/multi_latent_attention/qk_head_dim: required field is missing; allowed: integers from 1 to 65536"},
      {"MLA unknown key",
       def("{" + ok + R"(, "ffn_hidden_size": 64, "multi_latent_attention": {"kv_lora_rank": 64, "rope_dim": 1}})"),
       "at /model/multi_latent_attention/rope_dim: unknown key 'rope_dim'; allowed: kv_lora_rank, q_lora_rank, "
       "qk_head_dim, qk_pos_emb_head_dim, v_head_dim"},
      {"definition not an object", def("[1]"), "at /model: value [1]: expected an object, got an array"},
      {"unknown preset", [] { (void)resolve(R"("mixtral")"); },
       std::string("at /model: value \"mixtral\": unknown model preset (did you mean \"mixtral-8x22b\" or "
                   "\"mixtral-8x7b\"?); allowed: ") +
           kPresetList},
      {"unknown preset in an override", [] { (void)resolve(R"({"preset": "gpt-5"})"); },
       std::string("at /model/preset: value \"gpt-5\": unknown model preset; allowed: ") + kPresetList},
      {"override key unknown", [] { (void)resolve(R"({"preset": "llama-3-8b", "layers": 2})"); },
       std::string("at /model/layers: unknown key 'layers'; allowed: ") +
           "add_bias_linear, causal, ffn_hidden_size, first_k_dense, gated_linear_unit, hidden_dropout, hidden_size, kv_channels, "
           "moe_ffn_hidden_size, moe_layer_freq, moe_router_topk, moe_shared_expert_intermediate_size, "
           "mtp_num_layers, multi_latent_attention, name, num_attention_heads, num_layers, num_moe_experts, "
           "num_query_groups, preset, share_embeddings_and_output_weights, sliding_window, sliding_window_pattern, "
           "source, vocab_size"},
      {"override re-validated", [] { (void)resolve(R"({"preset": "mixtral-8x7b", "moe_router_topk": 9})"); },
       "at /model/moe_router_topk: value 9: moe_router_topk must be from 1 to num_moe_experts (8); allowed: "
       "integers from 1 to 8"},
      {"preset and hf_config", [] { (void)resolve(R"({"preset": "dbrx", "hf_config": "x.json"})"); },
       "at /model/hf_config: value \"x.json\": give either \"preset\" or \"hf_config\", not both"},
      {"model field type", [] { (void)resolve("42"); },
       std::string("at /model: value 42: expected a preset name, {\"preset\": ...}, {\"hf_config\": ...} or a full "
                   "definition, got an integer; allowed: ") +
           kPresetList},
      {"unknown model_type", hf(R"({"model_type": "gpt2", "n_embd": 768})"),
       std::string("cfg.json: at /model_type: value \"gpt2\": unsupported model_type; allowed: ") + kModelTypes},
      {"missing model_type", hf(R"({"hidden_size": 768})"),
       std::string("cfg.json: at /model_type: required field is missing; allowed: ") + kModelTypes},
      {"missing hidden_size",
       hf(R"({"model_type": "mixtral", "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 10})"),
       "cfg.json: at /hidden_size: required field is missing; allowed: integers from 1 to 1048576"},
      {"HF wrong type",
       hf(R"({"model_type": "llama", "hidden_size": "4096", "intermediate_size": 14336, "num_hidden_layers": 32,
           "num_attention_heads": 32, "vocab_size": 128256})"),
       "cfg.json: at /hidden_size: value \"4096\": expected an integer, got a string"},
      {"HF wrong type of a present field", hf("{" + llama + R"(, "num_key_value_heads": "8"})"),
       "cfg.json: at /num_key_value_heads: value \"8\": expected an integer, got a string"},
      {"HF heads not divisible by KV heads", hf("{" + llama + R"(, "num_key_value_heads": 3})"),
       "cfg.json: at /num_key_value_heads: value 3: num_attention_heads (32) must be divisible by "
       "num_query_groups; allowed: 1, 2, 4, 8, 16, 32"},
      {"HF topk above experts",
       hf(R"({"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 10, "num_local_experts": 4, "num_experts_per_tok": 5})"),
       "cfg.json: at /num_experts_per_tok: value 5: moe_router_topk must be from 1 to num_moe_experts (4); "
       "allowed: integers from 1 to 4"},
      {"HF experts missing",
       hf(R"({"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 10, "num_experts_per_tok": 2})"),
       "cfg.json: at /num_local_experts: required field is missing (also read as num_experts); allowed: integers "
       "from 0 to 65536"},
      {"HF zero layers", hf(R"({"model_type": "llama", "num_hidden_layers": 0, "hidden_size": 64})"),
       "cfg.json: at /num_hidden_layers: value 0: out of range; allowed: integers from 1 to 4096"},
      {"DBRX without ffn_config",
       hf(R"({"model_type": "dbrx", "d_model": 64, "n_heads": 4, "n_layers": 2, "vocab_size": 10,
           "attn_config": {"kv_n_heads": 2}})"),
       "cfg.json: at /ffn_config: required field is missing; allowed: an object"},
      {"DBRX nested field", hf(R"({"model_type": "dbrx", "d_model": 64, "n_heads": 4, "n_layers": 2, "vocab_size": 10,
           "attn_config": {"kv_n_heads": 2}, "ffn_config": {"moe_num_experts": 4, "moe_top_k": "2"}})"),
       "cfg.json: at /ffn_config/moe_top_k: value \"2\": expected an integer, got a string"},
      {"Llama-4 text_config not an object", hf(R"({"model_type": "llama4", "text_config": 3})"),
       "cfg.json: at /text_config: value 3: expected an object, got an integer"},
      {"Qwen sliding window", hf(R"({"model_type": "qwen3_moe", "use_sliding_window": true})"),
       "cfg.json: at /use_sliding_window: value true: Qwen sliding-window attention (windowed layers from "
       "max_window_layers on) is not supported; allowed: false"},
      {"HF mlp_only_layers out of range",
       hf(R"({"model_type": "qwen3_moe", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "vocab_size": 10, "num_experts": 4, "num_experts_per_tok": 2,
           "moe_intermediate_size": 32, "mlp_only_layers": [2]})"),
       "cfg.json: at /mlp_only_layers/0: value 2: out of range; allowed: integers from 0 to 1"},
      {"HF config not an object", hf("[]"), "cfg.json: at /: value []: expected an object, got an array"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.what));
    CHECK(error_of(c.load) == c.message);
  }
  // A missing HF file is named as resolved against the scenario's folder.
  const std::string missing = error_of([] { (void)resolve(R"({"hf_config": "no/such/config.json"})"); });
  CHECK(missing.find((test::source_dir() / "no/such/config.json").string()) != std::string::npos);
}

TEST_CASE("overrides on presets keep the layer rule, follow defaulted fields and are re-validated") {
  const model::ModelSpec v3 = config::load_model_preset("deepseek-v3");
  std::string ref;
  const model::ModelSpec small = resolve(R"({"preset": "deepseek-v3", "num_layers": 8})", &ref);
  CHECK(ref == "deepseek-v3");
  CHECK(small.num_layers == 8);
  CHECK(small.moe_layer_pattern == std::vector<bool>{false, false, false, true, true, true, true, true});
  CHECK(small.multi_latent_attention == v3.multi_latent_attention);
  CHECK(small.name == "deepseek-v3");

  CHECK(resolve(R"({"preset": "deepseek-v3", "num_layers": 8, "first_k_dense": 1})").num_moe_layers() == 7);
  // Megatron freq 2 with the 3 dense layers kept: MoE at 4 and 6.
  CHECK(resolve(R"({"preset": "deepseek-v3", "num_layers": 8, "moe_layer_freq": 2})").moe_layer_pattern ==
        std::vector<bool>{false, false, false, false, true, false, true, false});
  // A partial MLA object refines the preset's MLA.
  const auto no_q = resolve(R"({"preset": "deepseek-v3", "multi_latent_attention": {"q_lora_rank": 0}})");
  CHECK(no_q.multi_latent_attention == model::MlaSpec{0, 512, 128, 64, 128});
  // Without the query latent each layer projects h → n·(qk + rope) directly.
  const double h = 7168, n = 128;
  const double q_latent = h * 1536 + 1536 * n * 192 + 1536, q_direct = h * n * 192;
  CHECK(model::count_params(no_q).total == doctest::Approx(model::count_params(v3).total + 61 * (q_direct - q_latent)));

  // Head dim derived from hidden / heads follows a new hidden size; Qwen3's explicit 128 does not.
  CHECK(resolve(R"({"preset": "llama-3-8b", "hidden_size": 2048})").kv_channels == 64);
  CHECK(resolve(R"({"preset": "qwen3-30b-a3b", "hidden_size": 1024})").kv_channels == 128);
  // MHA stays MHA when the heads change; GQA keeps its groups.
  const auto gpt = resolve(R"({"preset": "gpt3-175b", "num_attention_heads": 64})");
  CHECK(gpt.num_query_groups == 64);
  CHECK(gpt.kv_channels == 192);
  CHECK(resolve(R"({"preset": "llama-3-8b", "num_attention_heads": 64})").num_query_groups == 8);

  // A dense preset becomes an MoE model; the expert width defaults to the dense width.
  const auto moe = resolve(R"({"preset": "llama-3-8b", "num_moe_experts": 8, "moe_router_topk": 2})");
  CHECK(moe.num_moe_layers() == 32);
  CHECK(moe.moe_ffn_hidden_size == 14336);
  // An MoE preset made dense needs a dense width.
  CHECK(error_of([] { (void)resolve(R"({"preset": "mixtral-8x7b", "num_moe_experts": 0})"); }) ==
        "at /model/ffn_hidden_size: value 0: the model has dense layers: ffn_hidden_size must be > 0; allowed: "
        "integers >= 1");
  const auto dense = resolve(R"({"preset": "mixtral-8x7b", "num_moe_experts": 0, "ffn_hidden_size": 14336})");
  CHECK_FALSE(dense.is_moe());
  CHECK(dense.moe_layer_pattern.empty());
  CHECK(dense.moe_router_topk == 0);  // no MoE left-overs: equal to the same model written densely
  CHECK(dense.moe_ffn_hidden_size == 0);

  // Features switch off with null.
  const auto windowed = resolve(R"({"preset": "llama-3-8b", "sliding_window": 4096, "sliding_window_pattern": 2})");
  CHECK(windowed.attention_span(0, 8192) == 4096);
  const auto unwindowed = config::apply_model_overrides(
      windowed, config::parse_json_text(R"({"sliding_window": null, "sliding_window_pattern": null})", "o.json"),
      "/model", "");
  CHECK(unwindowed.sliding_window == 0);
  CHECK(unwindowed.sliding_window_pattern == 0);

  // An irregular list cannot be stretched to another depth without a new moe_layer_freq.
  const model::ModelSpec irregular = definition(R"({"num_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
      "ffn_hidden_size": 128, "vocab_size": 10, "num_moe_experts": 4, "moe_router_topk": 1,
      "moe_layer_freq": [1, 1, 0, 1]})");
  CHECK(error_of([&] {
          (void)config::apply_model_overrides(irregular, config::parse_json_text(R"({"num_layers": 6})", "o.json"),
                                              "/model", "");
        }) ==
        "at /model/num_layers: value 6: the base model's MoE layer pattern is an explicit list of 4 entries: give "
        "moe_layer_freq for the new num_layers; allowed: 4, or a moe_layer_freq");
  const auto relisted = config::apply_model_overrides(
      irregular, config::parse_json_text(R"({"num_layers": 2, "moe_layer_freq": [0, 1]})", "o.json"), "/model", "");
  CHECK(relisted.moe_layer_pattern == std::vector<bool>{false, true});
}

TEST_CASE("resolve_model_field: preset name, full definition, hf_config relative to the scenario folder") {
  std::string ref = "stale";
  CHECK(resolve(R"("olmoe-1b-7b")", &ref) == config::load_model_preset("olmoe-1b-7b"));
  CHECK(ref == "olmoe-1b-7b");
  const auto full = resolve(R"({"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
      "ffn_hidden_size": 128, "vocab_size": 10})", &ref);
  CHECK(ref.empty());
  CHECK(full.num_layers == 2);

  const std::filesystem::path shared = test::shared_dir() / "hf-configs";
  if (!std::filesystem::is_directory(shared)) {
    MESSAGE("shared/hf-configs not found; hf_config resolution skipped");
    return;
  }
  const auto hf = config::resolve_model_field(
      config::parse_json_text(R"({"hf_config": "Mixtral-8x7B-v0.1.json", "num_layers": 4, "name": "tiny-mixtral"})",
                              "s.json"),
      "/model", shared, &ref);
  CHECK(ref == "hf_config:Mixtral-8x7B-v0.1.json");
  CHECK(hf.num_layers == 4);
  CHECK(hf.num_moe_layers() == 4);
  CHECK(hf.name == "tiny-mixtral");
  CHECK(hf.source == "HuggingFace config.json: " + (shared / "Mixtral-8x7B-v0.1.json").string());
  // An error inside the HF file names that file and the HF key.
  const auto bad = std::filesystem::temp_directory_path() / "moesim_modelconfig_bad.json";
  std::ofstream(bad) << R"({"model_type": "llama", "hidden_size": 0})";
  CHECK(error_of([&] {
          (void)config::resolve_model_field(config::parse_json_text(R"({"hf_config": "moesim_modelconfig_bad.json"})", "s.json"),
                                            "/model", bad.parent_path(), nullptr);
        }) == bad.string() + ": at /num_hidden_layers: required field is missing; allowed: integers from 1 to 4096");
  std::filesystem::remove(bad);
}
