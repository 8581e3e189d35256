// HuggingFace config.json import: every real config in shared/hf-configs, each family's aliases and
// nesting, equality with the presets, and naming.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "../test_paths.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "model/counts.hpp"

using namespace moesim;

namespace {

std::filesystem::path hf_dir() { return MOESIM_SOURCE_DIR "/../shared/hf-configs"; }

/// Published counts are rounded ("17B"): 1 % plus half a unit of the last published digit.
void check_published(double computed, double published_b, int decimals, const std::string& what) {
  const double tolerance_b = 0.01 * published_b + 0.5 * std::pow(10.0, -decimals);
  INFO(what << ": computed " << computed / 1e9 << " B, published " << published_b << " B (tolerance " << tolerance_b
            << " B)");
  CHECK(std::abs(computed / 1e9 - published_b) <= tolerance_b);
}

struct HfFigure {
  const char* file;
  double total_b;
  int total_decimals;
  double active_b;  ///< 0 for dense models
  int active_decimals;
  bool active_without_embedding;  ///< DeepSeek's convention (V2-Lite's 2.4 B only matches it)
  const char* preset;             ///< the preset of the same model, or nullptr
};

// Sources: Mixtral, DeepSeek-V3, Qwen3 and Llama figures as in tests/model/model_counts_test.cpp;
//  DeepSeek-V2-Lite 15.7 B / 2.4 B       DeepSeek-V2 paper, arXiv 2405.04434, section on DeepSeek-V2-Lite
//  Llama-4-Scout    109 B / 17 B         Meta, "The Llama 4 herd" blog (2025-04-05); the 109 B include the
//                                        vision encoder, which a text config does not describe
//  Phi-mini-MoE     7.6 B / 2.4 B        HuggingFace microsoft/Phi-mini-MoE-instruct model card
//  Llama-3.1-8B/70B 8.03 B / 70.6 B      HuggingFace meta-llama model pages (same architecture as Llama 3)
//  esm2 650M        0.65 B               facebookresearch/esm README
constexpr HfFigure kFiles[] = {
    {"DeepSeek-V2-Lite.json", 15.7, 1, 2.4, 1, true, nullptr},
    {"DeepSeek-V3.json", 671, 0, 37, 0, true, "deepseek-v3"},
    {"Llama-3.1-405B.json", 405, 0, 0, 0, false, "llama-3.1-405b"},
    {"Llama-3.1-70B.json", 70.6, 1, 0, 0, false, "llama-3-70b"},
    {"Llama-3.1-8B.json", 8.03, 2, 0, 0, false, "llama-3-8b"},
    {"Llama-4-Scout-17B-16E-Instruct.json", 109, 0, 17, 0, false, nullptr},
    {"Meta-Llama-3-8B.json", 8.03, 2, 0, 0, false, "llama-3-8b"},
    {"Mixtral-8x22B-v0.1.json", 141, 0, 39, 0, false, "mixtral-8x22b"},
    {"Mixtral-8x7B-v0.1.json", 46.7, 1, 12.9, 1, false, "mixtral-8x7b"},
    {"Phi-mini-MoE-instruct.json", 7.6, 1, 2.4, 1, false, nullptr},
    {"Qwen3-235B-A22B.json", 235, 0, 22, 0, false, "qwen3-235b-a22b"},
    {"Qwen3-30B-A3B.json", 30.5, 1, 3.3, 1, false, "qwen3-30b-a3b"},
    {"esm2_t33_650M_UR50D.json", 0.65, 2, 0, 0, false, "esm2-650m"},
};

bool have_shared() {
  if (std::filesystem::is_directory(hf_dir())) return true;
  MESSAGE("shared/hf-configs not found next to the repository; HF config tests skipped");
  return false;
}

/// The fields in which two specs differ, so that a failed equality says where.
std::string differences(const model::ModelSpec& a, const model::ModelSpec& b) {
  std::string out;
  auto field = [&](const char* name, auto x, auto y) {
    if (x != y) out += std::string(name) + " " + std::to_string(x) + " vs " + std::to_string(y) + "; ";
  };
  field("num_layers", a.num_layers, b.num_layers);
  field("hidden_size", a.hidden_size, b.hidden_size);
  field("num_attention_heads", a.num_attention_heads, b.num_attention_heads);
  field("num_query_groups", a.num_query_groups, b.num_query_groups);
  field("kv_channels", a.kv_channels, b.kv_channels);
  field("ffn_hidden_size", a.ffn_hidden_size, b.ffn_hidden_size);
  field("gated_linear_unit", a.gated_linear_unit, b.gated_linear_unit);
  field("vocab_size", a.vocab_size, b.vocab_size);
  field("causal", a.causal, b.causal);
  field("add_bias_linear", a.add_bias_linear, b.add_bias_linear);
  field("num_moe_experts", a.num_moe_experts, b.num_moe_experts);
  field("moe_router_topk", a.moe_router_topk, b.moe_router_topk);
  field("moe_ffn_hidden_size", a.moe_ffn_hidden_size, b.moe_ffn_hidden_size);
  field("moe_shared_expert_intermediate_size", a.moe_shared_expert_intermediate_size,
        b.moe_shared_expert_intermediate_size);
  field("num_moe_layers", a.num_moe_layers(), b.num_moe_layers());
  field("moe_layer_pattern equal", a.moe_layer_pattern == b.moe_layer_pattern, true);
  field("mtp_num_layers", a.mtp_num_layers, b.mtp_num_layers);
  field("multi_latent_attention equal", a.multi_latent_attention == b.multi_latent_attention, true);
  field("share_embeddings_and_output_weights", a.share_embeddings_and_output_weights,
        b.share_embeddings_and_output_weights);
  field("sliding_window", a.sliding_window, b.sliding_window);
  field("sliding_window_pattern", a.sliding_window_pattern, b.sliding_window_pattern);
  if (a.name != b.name) out += "name " + a.name + " vs " + b.name + "; ";
  if (a.source != b.source) out += "source differs; ";
  return out;
}

model::ModelSpec import_json(const char* text, const std::string& file = "cfg.json") {
  return config::import_hf_config(config::parse_json_text(text, file), file);
}

}  // namespace

TEST_CASE("every shared HF config imports and matches its published parameter counts") {
  if (!have_shared()) return;
  std::set<std::string> listed;
  for (const HfFigure& f : kFiles) listed.insert(f.file);
  for (const auto& entry : std::filesystem::directory_iterator(hf_dir())) {
    if (entry.path().extension() == ".json") {
      INFO(entry.path().filename().string());
      CHECK(listed.count(entry.path().filename().string()) == 1);  // a new file needs its published figures
    }
  }
  for (const HfFigure& f : kFiles) {
    const std::string path = (hf_dir() / f.file).string();
    const model::ModelSpec s = config::import_hf_config_file(path);
    CHECK(s.source == "HuggingFace config.json: " + path);
    const model::ParamCounts c = model::count_params(s);
    check_published(c.total, f.total_b, f.total_decimals, std::string(f.file) + " total");
    if (f.active_b > 0) {
      check_published(f.active_without_embedding ? c.active - c.embedding : c.active, f.active_b, f.active_decimals,
                      std::string(f.file) + " active");
    } else {
      CHECK(c.active == c.total);
    }
  }
}

TEST_CASE("an HF config and the preset of the same model give the same spec") {
  if (!have_shared()) return;
  for (const HfFigure& f : kFiles) {
    if (!f.preset) continue;
    INFO(std::string(f.file) << " vs preset " << std::string(f.preset));
    model::ModelSpec hf = config::import_hf_config_file((hf_dir() / f.file).string());
    const model::ModelSpec preset = config::load_model_preset(f.preset);
    hf.name = preset.name;
    hf.source = preset.source;
    INFO(differences(hf, preset));
    CHECK(hf == preset);
  }
}

TEST_CASE("family details: DeepSeek MLA and layer placement, Qwen head_dim, Llama-4 nesting, ESM encoder") {
  if (!have_shared()) return;
  const auto lite = config::import_hf_config_file((hf_dir() / "DeepSeek-V2-Lite.json").string());
  REQUIRE(lite.multi_latent_attention.has_value());
  CHECK(lite.multi_latent_attention->q_lora_rank == 0);  // q_lora_rank null: queries not compressed
  CHECK(lite.multi_latent_attention->kv_lora_rank == 512);
  CHECK(lite.moe_shared_expert_intermediate_size == 2 * 1408);
  CHECK(lite.num_moe_layers() == 26);
  CHECK_FALSE(lite.layer_is_moe(0));
  CHECK(lite.mtp_num_layers == 0);

  const auto v3 = config::import_hf_config_file((hf_dir() / "DeepSeek-V3.json").string());
  CHECK(v3.mtp_num_layers == 1);
  CHECK(v3.num_moe_layers() == 58);

  const auto qwen = config::import_hf_config_file((hf_dir() / "Qwen3-30B-A3B.json").string());
  CHECK(qwen.kv_channels == 128);  // head_dim, not hidden / heads = 64
  CHECK(qwen.num_query_groups == 4);

  const auto scout = config::import_hf_config_file((hf_dir() / "Llama-4-Scout-17B-16E-Instruct.json").string());
  CHECK(scout.hidden_size == 5120);
  CHECK(scout.num_moe_layers() == 48);
  CHECK(scout.moe_ffn_hidden_size == 8192);
  CHECK(scout.moe_shared_expert_intermediate_size == 8192);
  CHECK(scout.ffn_hidden_size == 16384);
  CHECK(scout.sliding_window == 8192);  // chunked attention
  CHECK(scout.sliding_window_pattern == 4);  // every 4th layer NoPE with full attention
  CHECK(scout.name == "Llama-4-Scout-17B-16E-Instruct");

  const auto phi = config::import_hf_config_file((hf_dir() / "Phi-mini-MoE-instruct.json").string());
  CHECK(phi.name == "Phi-mini-MoE");  // from _name_or_path
  CHECK(phi.sliding_window == 2047);
  CHECK(phi.num_moe_experts == 16);

  const auto esm = config::import_hf_config_file((hf_dir() / "esm2_t33_650M_UR50D.json").string());
  CHECK_FALSE(esm.causal);
  CHECK_FALSE(esm.gated_linear_unit);
  CHECK(esm.add_bias_linear);
  CHECK(esm.share_embeddings_and_output_weights);
}

TEST_CASE("DBRX nesting (ffn_config, attn_config) and OLMoE import equal their presets") {
  const char* dbrx = R"({"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40, "vocab_size": 100352,
    "max_seq_len": 32768, "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
    "ffn_config": {"moe_num_experts": 16, "moe_top_k": 4, "ffn_hidden_size": 10752, "moe_loss_weight": 0.05}})";
  model::ModelSpec d = import_json(dbrx, "dbrx/config.json");
  CHECK(d.name == "dbrx");  // config.json takes its folder's name
  model::ModelSpec preset = config::load_model_preset("dbrx");
  d.name = preset.name;
  d.source = preset.source;
  INFO(differences(d, preset));
  CHECK(d == preset);

  // Values of allenai/OLMoE-1B-7B-0924 (Megatron-Bridge test_olmoe_bridge.py); num_local_experts is
  // OLMoE's alias of num_experts.
  const char* olmoe = R"({"model_type": "olmoe", "hidden_size": 2048, "intermediate_size": 1024,
    "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 16, "num_local_experts": 64,
    "num_experts_per_tok": 8, "vocab_size": 50304, "clip_qkv": null, "tie_word_embeddings": false})";
  model::ModelSpec o = import_json(olmoe);
  preset = config::load_model_preset("olmoe-1b-7b");
  o.name = preset.name;
  o.source = preset.source;
  INFO(differences(o, preset));
  CHECK(o == preset);
}

TEST_CASE("layer placement: Qwen decoder_sparse_step and mlp_only_layers, Llama-4 interleave and moe_layers") {
  const auto qwen = import_json(R"({"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632,
    "num_hidden_layers": 6, "num_attention_heads": 16, "num_key_value_heads": 16, "vocab_size": 151936,
    "num_experts": 60, "num_experts_per_tok": 4, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "decoder_sparse_step": 2, "mlp_only_layers": [3],
    "use_sliding_window": false, "sliding_window": 32768})");
  // (i + 1) % 2 == 0 → layers 1, 3, 5; layer 3 forced dense.
  CHECK(qwen.moe_layer_pattern == std::vector<bool>{false, true, false, false, false, true});
  CHECK(qwen.moe_shared_expert_intermediate_size == 5632);
  CHECK(qwen.ffn_hidden_size == 5632);
  CHECK(qwen.sliding_window == 0);  // use_sliding_window false

  const char* llama4 = R"({"model_type": "llama4", "text_config": {"hidden_size": 1024, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 512,
    "intermediate_size_mlp": 2048, "num_local_experts": 4, "num_experts_per_tok": 1, "vocab_size": 1000,
    "interleave_moe_layer_step": 2}})";
  const auto l4 = import_json(llama4);
  CHECK(l4.moe_layer_pattern == std::vector<bool>{false, true, false, true});
  CHECK(l4.sliding_window == 0);
  const auto l4_text = import_json(R"({"model_type": "llama4_text", "hidden_size": 1024, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 512, "intermediate_size_mlp": 2048,
    "num_local_experts": 4, "num_experts_per_tok": 1, "vocab_size": 1000, "moe_layers": [0, 2]})");
  CHECK(l4_text.moe_layer_pattern == std::vector<bool>{true, false, true, false});
}

TEST_CASE("model names: _name_or_path, file name, folder, HF cache layout") {
  const char* cfg = R"({"model_type": "llama", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
    "num_attention_heads": 4, "vocab_size": 100})";
  CHECK(import_json(cfg, "/tmp/Tiny-Llama.json").name == "Tiny-Llama");
  CHECK(import_json(cfg, "/models/tiny/config.json").name == "tiny");
  CHECK(import_json(cfg, "/hub/models--acme--Tiny-7B/snapshots/0123abc/config.json").name == "Tiny-7B");
  const char* named = R"({"model_type": "mistral", "_name_or_path": "/data/ckpt/mistral-tiny/",
    "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 1, "vocab_size": 100, "sliding_window": 128})";
  const auto m = import_json(named, "x/config.json");
  CHECK(m.name == "mistral-tiny");
  CHECK(m.sliding_window == 128);
  CHECK(m.num_query_groups == 1);
  CHECK(m.kv_channels == 64);
  CHECK(m.num_query_groups == 1);
}
