// Parameter counts of every preset against the figures their authors publish, and the FLOP formula
// against closed forms (Narayanan et al. 2021 for GPT, NeMo's flops_formulas.py for Mixtral).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "config/model_loader.hpp"
#include "model/counts.hpp"

using namespace moesim;
using model::FlopsConvention;

namespace {

/// A published count is a rounded figure ("37B", "6.9B"). It is checked to 1 % plus half a unit of
/// its last digit: "37B" cannot tell 37.55 B from 37.45 B, and a tighter check would test the
/// rounding, not the model.
void check_published(double computed, double published_b, int decimals, const std::string& what) {
  const double tolerance_b = 0.01 * published_b + 0.5 * std::pow(10.0, -decimals);
  INFO(what << ": computed " << computed / 1e9 << " B, published " << published_b << " B (tolerance " << tolerance_b
            << " B)");
  CHECK(std::abs(computed / 1e9 - published_b) <= tolerance_b);
}

struct PresetFigure {
  const char* preset;
  double total_b;
  int total_decimals;
  double active_b;  ///< 0 for dense models (active = total)
  int active_decimals;
  bool active_without_embedding;  ///< DeepSeek counts activated weights without the input embedding
};

// Sources of the published figures:
//  mixtral-8x7b   46.7 B / 12.9 B   Mistral AI, "Mixtral of experts" blog (2023-12-11) and arXiv 2401.04088
//  mixtral-8x22b  141 B / 39 B      Mistral AI, "Cheaper, Better, Faster, Stronger" blog (2024-04-17)
//  deepseek-v3    671 B / 37 B      DeepSeek-V3 Technical Report, arXiv 2412.19437, abstract (MTP excluded)
//  qwen3-235b     235 B / 22 B      Qwen/Qwen3-235B-A22B model card ("235B in total and 22B activated")
//  qwen3-30b      30.5 B / 3.3 B    Qwen/Qwen3-30B-A3B model card ("30.5B in total and 3.3B activated")
//  olmoe-1b-7b    6.9 B / 1.3 B     Muennighoff et al. 2024, OLMoE, arXiv 2409.02060 (6.9 B total, 1.3 B active)
//  dbrx           132 B / 36 B      Databricks, "Introducing DBRX" blog (2024-03-27)
//  llama-3-8b     8.03 B            HuggingFace meta-llama/Meta-Llama-3-8B model page (safetensors count)
//  llama-3-70b    70.6 B            HuggingFace meta-llama/Meta-Llama-3-70B model page (safetensors count)
//  llama-3.1-405b 405 B             Dubey et al. 2024, The Llama 3 Herd of Models, arXiv 2407.21783, Table 3
//  gpt3-175b      175 B             Brown et al. 2020, arXiv 2005.14165, Table 2.1 (175.0 B)
//  esm2-650m      0.65 B            facebookresearch/esm README, pre-trained models table (650M)
//  esm2-3b        2.8 B             the brief's reference figure; the esm README names the model "3B"
//  esm2-15b       15 B              facebookresearch/esm README, pre-trained models table (15B)
constexpr PresetFigure kPublished[] = {
    {"mixtral-8x7b", 46.7, 1, 12.9, 1, false},     {"mixtral-8x22b", 141, 0, 39, 0, false},
    {"deepseek-v3", 671, 0, 37, 0, true},          {"qwen3-235b-a22b", 235, 0, 22, 0, false},
    {"qwen3-30b-a3b", 30.5, 1, 3.3, 1, false},     {"olmoe-1b-7b", 6.9, 1, 1.3, 1, false},
    {"dbrx", 132, 0, 36, 0, false},                {"llama-3-8b", 8.03, 2, 0, 0, false},
    {"llama-3-70b", 70.6, 1, 0, 0, false},         {"llama-3.1-405b", 405, 0, 0, 0, false},
    {"gpt3-175b", 175, 0, 0, 0, false},            {"esm2-650m", 0.65, 2, 0, 0, false},
    {"esm2-3b", 2.8, 1, 0, 0, false},              {"esm2-15b", 15, 0, 0, 0, false},
};

/// GPT-style dense model of Narayanan et al. 2021 (MHA, ffn 4h, GELU, untied embeddings).
model::ModelSpec gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::int64_t vocab) {
  model::ModelSpec s;
  s.name = "gpt";
  s.num_layers = layers;
  s.hidden_size = hidden;
  s.num_attention_heads = heads;
  s.num_query_groups = heads;
  s.kv_channels = hidden / heads;
  s.ffn_hidden_size = 4 * hidden;
  s.gated_linear_unit = false;
  s.add_bias_linear = true;
  s.vocab_size = vocab;
  return s;
}

double as_double(std::int64_t v) { return static_cast<double>(v); }

}  // namespace

TEST_CASE("every preset has a published parameter figure and matches it") {
  CHECK(config::model_preset_names().size() == std::size(kPublished));
  for (const PresetFigure& f : kPublished) {
    const model::ModelSpec s = config::load_model_preset(f.preset);
    const model::ParamCounts c = model::count_params(s);
    check_published(c.total, f.total_b, f.total_decimals, std::string(f.preset) + " total");
    if (f.active_b > 0) {
      const double active = f.active_without_embedding ? c.active - c.embedding : c.active;
      check_published(active, f.active_b, f.active_decimals, std::string(f.preset) + " active");
      CHECK(c.active < c.total);
    } else {
      CHECK(c.active == c.total);
    }
  }
}

TEST_CASE("DeepSeek-V3's MTP module is counted apart from the total") {
  const auto c = model::count_params(config::load_model_preset("deepseek-v3"));
  // One MoE layer (~11.3 B) + eh_proj 2h² (~0.1 B) + norms; the report's 14 B of MTP weights also
  // hold copies of the embedding and the output head (0.93 B each), which are shared here.
  CHECK(c.mtp / 1e9 == doctest::Approx(11.6).epsilon(0.01));
  CHECK(c.total / 1e9 == doctest::Approx(671.0).epsilon(0.001));
}

TEST_CASE("parameter breakdown: GQA attention, gated MLP, experts, router, norms, tied embeddings") {
  const model::ModelSpec s = config::load_model_preset("mixtral-8x7b");
  const model::LayerParams p = model::layer_params(s, 0);
  const double h = 4096, d = 128;
  CHECK(p.attention == h * 32 * d + 2 * h * 8 * d + 32 * d * h);
  CHECK(p.routed_expert_one == 3 * h * 14336);
  CHECK(p.routed_experts == 8 * p.routed_expert_one);
  CHECK(p.router == h * 8);
  CHECK(p.norms == 2 * h);
  CHECK(p.dense_mlp == 0);
  const auto c = model::count_params(s);
  CHECK(c.expert_params == 32 * p.routed_experts);
  CHECK(c.total == c.embedding + c.output_layer + c.transformer_layers);
  CHECK(c.total == doctest::Approx(32 * p.total() + h + 2 * 32000 * h));
  CHECK(c.active == doctest::Approx(c.total - 32 * 6 * p.routed_expert_one));

  model::ModelSpec tied = s;
  tied.share_embeddings_and_output_weights = true;
  CHECK(model::count_params(tied).output_layer == 0);
  CHECK(model::count_params(tied).total == doctest::Approx(c.total - 32000 * h));

  // GPT-3 has biases on every linear layer: qkv 3h + proj h + fc1 4h + fc2 h per layer.
  const model::ModelSpec g = config::load_model_preset("gpt3-175b");
  const double gh = 12288;
  CHECK(model::layer_params(g, 0).total() == 12 * gh * gh + 9 * gh + 2 * gh);
}

TEST_CASE("MLA parameter shapes follow DeepSeek's projections") {
  const model::ModelSpec s = config::load_model_preset("deepseek-v3");
  const double h = 7168, n = 128;
  const double q = h * 1536 + 1536 * n * (128 + 64) + 1536;
  const double kv = h * (512 + 64) + 512 * n * (128 + 128) + 512;
  const double out = n * 128 * h;
  CHECK(model::layer_params(s, 0).attention == q + kv + out);
  CHECK(model::layer_params(s, 0).dense_mlp == 3 * h * 18432);
  CHECK(model::layer_params(s, 3).shared_experts == 3 * h * 2048);
  CHECK(model::layer_params(s, 3).routed_experts == 256 * 3 * h * 2048);
  model::ModelSpec no_q_lora = s;
  no_q_lora.multi_latent_attention->q_lora_rank = 0;
  CHECK(model::layer_params(no_q_lora, 0).attention == h * n * (128 + 64) + kv + out);
}

TEST_CASE("full-s2 FLOPs of a GPT equal 72·B·s·L·h²·(1 + s/6h + V/12Lh)") {
  for (const auto& s : {gpt(24, 1024, 16, 50304), gpt(96, 12288, 96, 51200), gpt(2, 256, 4, 1000)}) {
    for (const std::int64_t seq : {128, 2048, 8192}) {
      const std::int64_t batch = 64;
      const double B = as_double(batch), S = as_double(seq), L = as_double(s.num_layers), h = as_double(s.hidden_size),
                   V = as_double(s.vocab_size);
      const double expected = 72 * B * S * L * h * h * (1 + S / (6 * h) + V / (12 * L * h));
      CHECK(model::model_flops_per_step(s, seq, batch, FlopsConvention::kFullS2) == doctest::Approx(expected).epsilon(1e-12));
      // Megatron's current convention halves the causal s² term: 12·h·s per token-layer becomes 6·h·s.
      const double halved = 72 * B * S * L * h * h * (1 + S / (12 * h) + V / (12 * L * h));
      CHECK(model::model_flops_per_step(s, seq, batch, FlopsConvention::kMegatron) == doctest::Approx(halved).epsilon(1e-12));
    }
  }
}

TEST_CASE("bidirectional encoders are never halved") {
  const model::ModelSpec esm = config::load_model_preset("esm2-650m");
  CHECK_FALSE(esm.causal);
  const double mega = model::model_flops_per_step(esm, 1024, 32, FlopsConvention::kMegatron);
  CHECK(mega == model::model_flops_per_step(esm, 1024, 32, FlopsConvention::kFullS2));
  model::ModelSpec causal = esm;
  causal.causal = true;
  CHECK(model::model_flops_per_step(causal, 1024, 32, FlopsConvention::kMegatron) < mega);
}

TEST_CASE("Mixtral FLOPs match NeMo's closed form and count top-k experts, not the router") {
  // NeMo nemo/utils/flops_formulas.py (mixtral): gbs·s·L·h²·(12 + 12g/n + 18·k·ffn/h + 12·s/h + 6V/(L·h)),
  // full s² as NeMo counts it.
  const model::ModelSpec s = config::load_model_preset("mixtral-8x7b");
  const double B = 128, S = 4096, L = 32, h = 4096, g = 8, n = 32, k = 2, f = 14336, V = 32000;
  const double nemo = B * S * L * h * h * (12 + 12 * g / n + 18 * k * f / h + 12 * S / h + 6 * V / (L * h));
  CHECK(model::model_flops_per_step(s, 4096, 128, FlopsConvention::kFullS2) == doctest::Approx(nemo).epsilon(1e-12));

  model::ModelSpec more_experts = s;
  more_experts.num_moe_experts = 64;  // same top-k: same FLOPs, the router GEMM is not counted
  CHECK(model::model_flops_per_step(more_experts, 4096, 128, FlopsConvention::kMegatron) ==
        model::model_flops_per_step(s, 4096, 128, FlopsConvention::kMegatron));
  model::ModelSpec top1 = s;
  top1.moe_router_topk = 1;
  const double T = B * S;
  CHECK(model::model_flops_per_step(s, 4096, 128, FlopsConvention::kMegatron) -
            model::model_flops_per_step(top1, 4096, 128, FlopsConvention::kMegatron) ==
        doctest::Approx(6 * T * L * 3 * h * f));
}

TEST_CASE("MLA attention core uses qk+rope for QKᵀ and v for PV; MTP adds a layer, eh_proj and logits") {
  const model::ModelSpec s = config::load_model_preset("deepseek-v3");
  const double B = 16, S = 4096, T = B * S, n = 128, h = 7168, V = 129280;
  const double full = model::model_flops_per_step(s, 4096, 16, FlopsConvention::kFullS2);
  const double mega = model::model_flops_per_step(s, 4096, 16, FlopsConvention::kMegatron);
  // 61 layers + 1 MTP layer, each with core 6·T·n·(192 + 128)·S under full-s2; Megatron keeps half.
  CHECK(full - mega == doctest::Approx(0.5 * 6 * T * n * (192 + 128) * S * 62));

  model::ModelSpec no_mtp = s;
  no_mtp.mtp_num_layers = 0;
  const double last_layer_linear = 6 * T * (model::layer_params(s, 60).attention - 1536 - 512 + 9 * 3 * h * 2048);
  const double last_layer_core = 6 * T * n * (192 + 128) * S / 2;
  CHECK(mega - model::model_flops_per_step(no_mtp, 4096, 16, FlopsConvention::kMegatron) ==
        doctest::Approx(last_layer_linear + last_layer_core + 6 * T * 2 * h * h + 6 * T * h * V));
}

TEST_CASE("sliding-window layers count the keys the causal window keeps") {
  model::ModelSpec s = gpt(2, 512, 8, 1000);
  const std::int64_t seq = 4096;
  const double base = model::model_flops_per_step(s, seq, 1, FlopsConvention::kMegatron);
  s.sliding_window = 1024;
  s.sliding_window_pattern = 2;  // layer 0 windowed, layer 1 full
  CHECK(s.attention_span(0, seq) == 1024);
  CHECK(s.attention_span(1, seq) == seq);
  const double windowed = model::model_flops_per_step(s, seq, 1, FlopsConvention::kMegatron);
  const double S = 4096, w = 1024, width = 2 * 512;  // n·d for QKᵀ plus n·d for PV
  CHECK(base - windowed == doctest::Approx(6 * S * width * (S / 2 - (w - w * w / (2 * S)))));
  // A window as long as the sequence is full attention.
  s.sliding_window = seq;
  CHECK(model::model_flops_per_step(s, seq, 1, FlopsConvention::kMegatron) == doctest::Approx(base));
  // full-s2 counts the whole window.
  s.sliding_window = 1024;
  const double full = model::model_flops_per_step(s, seq, 1, FlopsConvention::kFullS2);
  const double full_base = model::model_flops_per_step(gpt(2, 512, 8, 1000), seq, 1, FlopsConvention::kFullS2);
  CHECK(full_base - full == doctest::Approx(6 * S * width * (S - w)));
}

TEST_CASE("FLOP convention names") {
  CHECK(model::to_string(FlopsConvention::kMegatron) == "megatron");
  CHECK(model::to_string(FlopsConvention::kFullS2) == "full-s2");
}
