#include "config/hf_families.hpp"

#include <array>
#include <initializer_list>
#include <optional>

#include "config/model_limits.hpp"
#include "core/error.hpp"
#include "model/model_layer_pattern.hpp"

namespace moesim::config::hf {

namespace {

namespace lim = model_limits;
using model::ModelSpec;

std::string str(std::int64_t v) { return std::to_string(v); }

std::string range_text(IntRange r) { return "integers from " + str(r.min) + " to " + str(r.max); }

void map_key(Imported& imp, const char* megatron, std::string hf_path) {
  imp.hf_key_of.emplace_back(std::string("/") + megatron, std::move(hf_path));
}

/// A sub-object such as DBRX's ffn_config or Llama-4's text_config; it must be present.
ObjectReader nested(const ObjectReader& r, const char* key) {
  const Json* v = r.get(key);
  if (!v) throw InputError(r.path_of(key), "", "required field is missing", "an object");
  return lenient_reader(*v, r.path_of(key));
}

/// The first of `aliases` the config holds (transformers' attribute_map lets a family spell a field
/// more than one way). `used` receives the path of the key read.
std::optional<std::int64_t> optional_alias(const ObjectReader& r, std::initializer_list<const char*> aliases,
                                           IntRange range, std::string& used) {
  used = r.path_of(*aliases.begin());
  for (const char* key : aliases) {
    if (r.has(key)) {
      used = r.path_of(key);
      return r.optional_int(key, range);
    }
  }
  return std::nullopt;
}

std::int64_t require_alias(const ObjectReader& r, std::initializer_list<const char*> aliases, IntRange range,
                           std::string& used) {
  if (auto v = optional_alias(r, aliases, range, used)) return *v;
  std::string others;
  for (const char* key : aliases) {
    if (key != *aliases.begin()) others += std::string(others.empty() ? "" : ", ") + key;
  }
  throw InputError(used, "", "required field is missing" + (others.empty() ? "" : " (also read as " + others + ")"),
                   range_text(range));
}

/// Indices of layers (Qwen mlp_only_layers, Llama-4 moe_layers), each checked against num_layers.
std::vector<std::int64_t> read_layer_indices(const ObjectReader& r, const char* key, std::int64_t num_layers) {
  const Json* v = r.get(key);
  if (!v || v->is_null()) return {};
  if (!v->is_array()) {
    throw InputError(r.path_of(key), describe_value(*v), "expected a list of layer indices, got " + describe_type(*v));
  }
  if (v->size() > static_cast<std::size_t>(num_layers)) {
    throw InputError(r.path_of(key), describe_value(*v), "more layer indices than layers (" + str(num_layers) + ")");
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    out.push_back(to_int((*v)[i], r.path_of(key) + "/" + std::to_string(i), {0, num_layers - 1}));
  }
  return out;
}

/// The four sizes every family except DBRX spells the same way; one KV head per query head until the
/// family says otherwise (GQA configs, or MLA where one latent serves all heads).
void read_sizes(const ObjectReader& r, Imported& imp) {
  ModelSpec& s = imp.spec;
  // The decoders' HF modelling code (Llama, Mixtral, Qwen, DeepSeek, ...) has no residual dropout,
  // whatever attention_dropout says: no masks are kept. ESM overrides it below.
  s.hidden_dropout = 0.0;
  s.num_layers = r.require_int("num_hidden_layers", lim::kLayers);
  s.hidden_size = r.require_int("hidden_size", lim::kHidden);
  s.num_attention_heads = r.require_int("num_attention_heads", lim::kHeads);
  s.num_query_groups = s.num_attention_heads;
  s.vocab_size = r.require_int("vocab_size", lim::kVocab);
  map_key(imp, "num_layers", r.path_of("num_hidden_layers"));
  map_key(imp, "hidden_size", r.path_of("hidden_size"));
  map_key(imp, "num_attention_heads", r.path_of("num_attention_heads"));
  map_key(imp, "vocab_size", r.path_of("vocab_size"));
}

/// Fields every Llama-style decoder config spells the same way.
Imported read_decoder_core(const ObjectReader& r) {
  Imported imp;
  ModelSpec& s = imp.spec;
  read_sizes(r, imp);
  // Configs from before GQA omit num_key_value_heads: one KV head per query head.
  s.num_query_groups = r.get_int("num_key_value_heads", s.num_attention_heads, lim::kHeads);
  s.share_embeddings_and_output_weights = r.get_bool("tie_word_embeddings", false);
  s.add_bias_linear = r.get_bool("attention_bias", false) || r.get_bool("mlp_bias", false);
  if (auto d = r.optional_int("head_dim", lim::kHeadDim)) {
    s.kv_channels = *d;
  } else if (s.hidden_size % s.num_attention_heads == 0) {
    s.kv_channels = s.hidden_size / s.num_attention_heads;
  } else {
    throw InputError(r.path_of("head_dim"), "",
                     "head_dim is required when hidden_size (" + str(s.hidden_size) +
                         ") is not divisible by num_attention_heads (" + str(s.num_attention_heads) + ")",
                     range_text(lim::kHeadDim));
  }
  map_key(imp, "num_query_groups", r.path_of("num_key_value_heads"));
  map_key(imp, "kv_channels", r.path_of("head_dim"));
  return imp;
}

/// Mistral-family window: every layer attends to the last `sliding_window` tokens (null = none).
void read_sliding_window(const ObjectReader& r, Imported& imp) {
  imp.spec.sliding_window = r.get_int("sliding_window", 0, lim::kWindow);
  map_key(imp, "sliding_window", r.path_of("sliding_window"));
}

/// Qwen keeps a sliding_window value even when it is off; when on, the window applies from layer
/// max_window_layers onwards, a layout ModelSpec cannot express, so it is refused rather than ignored.
void refuse_qwen_sliding_window(const ObjectReader& r) {
  if (r.get_bool("use_sliding_window", false)) {
    throw InputError(r.path_of("use_sliding_window"), "true",
                     "Qwen sliding-window attention (windowed layers from max_window_layers on) is not supported",
                     "false");
  }
}

void all_layers_moe(ModelSpec& s) { s.moe_layer_pattern.assign(static_cast<std::size_t>(s.num_layers), true); }

void read_dense_ffn(const ObjectReader& r, Imported& imp) {
  imp.spec.ffn_hidden_size = r.require_int("intermediate_size", lim::kFfn);
  map_key(imp, "ffn_hidden_size", r.path_of("intermediate_size"));
}

Imported read_llama(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  Imported imp = read_decoder_core(r);
  read_dense_ffn(r, imp);
  return imp;
}

Imported read_mistral(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  Imported imp = read_decoder_core(r);
  read_dense_ffn(r, imp);
  read_sliding_window(r, imp);
  return imp;
}

Imported read_qwen_dense(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  refuse_qwen_sliding_window(r);
  Imported imp = read_decoder_core(r);
  read_dense_ffn(r, imp);
  return imp;
}

/// Mixtral, PhiMoE and OLMoE: every layer is MoE and intermediate_size is the expert width.
Imported read_all_moe(const ObjectReader& r, std::initializer_list<const char*> expert_keys, bool has_window) {
  Imported imp = read_decoder_core(r);
  ModelSpec& s = imp.spec;
  if (has_window) read_sliding_window(r, imp);
  std::string used;
  s.num_moe_experts = require_alias(r, expert_keys, lim::kExperts, used);
  map_key(imp, "num_moe_experts", used);
  if (!s.is_moe()) return imp;
  s.moe_router_topk = r.require_int("num_experts_per_tok", lim::kTopk);
  map_key(imp, "moe_router_topk", r.path_of("num_experts_per_tok"));
  s.moe_ffn_hidden_size = r.require_int("intermediate_size", lim::kFfn);
  map_key(imp, "moe_ffn_hidden_size", r.path_of("intermediate_size"));
  all_layers_moe(s);
  return imp;
}

Imported read_mixtral(const Json& cfg) {
  return read_all_moe(lenient_reader(cfg, ""), {"num_local_experts", "num_experts"}, true);
}

Imported read_olmoe(const Json& cfg) {
  return read_all_moe(lenient_reader(cfg, ""), {"num_experts", "num_local_experts"}, false);
}

/// Qwen2-MoE / Qwen3-MoE: layer i is MoE unless listed in mlp_only_layers, and when
/// (i + 1) % decoder_sparse_step == 0 (transformers Qwen3MoeDecoderLayer).
Imported read_qwen_moe(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  refuse_qwen_sliding_window(r);
  Imported imp = read_decoder_core(r);
  ModelSpec& s = imp.spec;
  std::string used;
  s.num_moe_experts = require_alias(r, {"num_experts", "num_local_experts"}, lim::kExperts, used);
  map_key(imp, "num_moe_experts", used);
  s.ffn_hidden_size = r.get_int("intermediate_size", 0, lim::kFfnOrZero);
  map_key(imp, "ffn_hidden_size", r.path_of("intermediate_size"));
  if (!s.is_moe()) return imp;
  s.moe_router_topk = r.require_int("num_experts_per_tok", lim::kTopk);
  map_key(imp, "moe_router_topk", r.path_of("num_experts_per_tok"));
  s.moe_ffn_hidden_size = r.require_int("moe_intermediate_size", lim::kFfn);
  map_key(imp, "moe_ffn_hidden_size", r.path_of("moe_intermediate_size"));
  // Qwen2-MoE's single shared expert (absent in Qwen3-MoE).
  s.moe_shared_expert_intermediate_size = r.get_int("shared_expert_intermediate_size", 0, lim::kFfnOrZero);
  const std::int64_t step = r.get_int("decoder_sparse_step", 1, lim::kLayerStep);
  s.moe_layer_pattern = model::moe_layer_pattern({0, step, step - 1}, s.num_layers);
  for (std::int64_t i : read_layer_indices(r, "mlp_only_layers", s.num_layers)) {
    s.moe_layer_pattern[static_cast<std::size_t>(i)] = false;
  }
  map_key(imp, "moe_layer_freq", r.path_of("decoder_sparse_step"));
  return imp;
}

/// DeepSeek-V2/V3 (and Kimi-K2, same architecture): MLA attention, first_k_dense_replace dense
/// layers, then MoE where i % moe_layer_freq == 0 (transformers DeepseekV3DecoderLayer).
Imported read_deepseek(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  Imported imp;
  ModelSpec& s = imp.spec;
  read_sizes(r, imp);  // num_key_value_heads is meaningless under MLA (one latent serves all heads)
  s.share_embeddings_and_output_weights = r.get_bool("tie_word_embeddings", false);
  s.add_bias_linear = r.get_bool("attention_bias", false);
  read_dense_ffn(r, imp);

  model::MlaSpec m;
  m.q_lora_rank = r.get_int("q_lora_rank", 0, lim::kLatentRankOrZero);  // null: queries are not compressed
  m.kv_lora_rank = r.require_int("kv_lora_rank", lim::kLatentRank);
  m.qk_head_dim = r.require_int("qk_nope_head_dim", lim::kHeadDim);
  m.qk_pos_emb_head_dim = r.require_int("qk_rope_head_dim", lim::kHeadDimOrZero);
  m.v_head_dim = r.require_int("v_head_dim", lim::kHeadDim);
  s.multi_latent_attention = m;
  s.kv_channels = m.v_head_dim;
  s.mtp_num_layers = r.get_int("num_nextn_predict_layers", 0, lim::kMtpLayers);
  map_key(imp, "mtp_num_layers", r.path_of("num_nextn_predict_layers"));

  std::string used;
  s.num_moe_experts = optional_alias(r, {"n_routed_experts", "num_local_experts"}, lim::kExperts, used).value_or(0);
  map_key(imp, "num_moe_experts", used);
  if (!s.is_moe()) return imp;
  s.moe_router_topk = r.require_int("num_experts_per_tok", lim::kTopk);
  map_key(imp, "moe_router_topk", r.path_of("num_experts_per_tok"));
  s.moe_ffn_hidden_size = r.require_int("moe_intermediate_size", lim::kFfn);
  map_key(imp, "moe_ffn_hidden_size", r.path_of("moe_intermediate_size"));
  // n_shared_experts experts of the routed width act as one dense MLP of the summed width.
  s.moe_shared_expert_intermediate_size =
      r.get_int("n_shared_experts", 0, lim::kSharedExperts) * s.moe_ffn_hidden_size;
  const std::int64_t first_dense = r.get_int("first_k_dense_replace", 0, lim::kLayerCount);
  const std::int64_t freq = r.get_int("moe_layer_freq", 1, lim::kLayerStep);
  s.moe_layer_pattern = model::moe_layer_pattern({first_dense, freq, 0}, s.num_layers);
  map_key(imp, "moe_layer_freq", r.path_of("first_k_dense_replace"));
  return imp;
}

/// DBRX: its own names at the top level, experts in ffn_config, KV heads in attn_config.
Imported read_dbrx(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  const ObjectReader attn = nested(r, "attn_config");
  const ObjectReader ffn = nested(r, "ffn_config");
  Imported imp;
  ModelSpec& s = imp.spec;
  s.num_layers = r.require_int("n_layers", lim::kLayers);
  s.hidden_size = r.require_int("d_model", lim::kHidden);
  s.num_attention_heads = r.require_int("n_heads", lim::kHeads);
  s.num_query_groups = attn.require_int("kv_n_heads", lim::kHeads);
  s.vocab_size = r.require_int("vocab_size", lim::kVocab);
  s.share_embeddings_and_output_weights = r.get_bool("tie_word_embeddings", false);
  // DbrxBlock drops out its residual branches with resid_pdrop (0.0 in DBRX's configs).
  s.hidden_dropout = r.get_number("resid_pdrop", 0.0, lim::kDropout);
  if (s.hidden_size % s.num_attention_heads != 0) {
    throw InputError(r.path_of("d_model"), str(s.hidden_size),
                     "d_model must be divisible by n_heads (" + str(s.num_attention_heads) + ")");
  }
  s.kv_channels = s.hidden_size / s.num_attention_heads;
  s.num_moe_experts = ffn.require_int("moe_num_experts", lim::kExperts);
  s.moe_router_topk = ffn.require_int("moe_top_k", lim::kTopk);
  s.moe_ffn_hidden_size = ffn.require_int("ffn_hidden_size", lim::kFfn);
  if (s.is_moe()) all_layers_moe(s);
  map_key(imp, "num_layers", r.path_of("n_layers"));
  map_key(imp, "hidden_size", r.path_of("d_model"));
  map_key(imp, "num_attention_heads", r.path_of("n_heads"));
  map_key(imp, "num_query_groups", attn.path_of("kv_n_heads"));
  map_key(imp, "vocab_size", r.path_of("vocab_size"));
  map_key(imp, "num_moe_experts", ffn.path_of("moe_num_experts"));
  map_key(imp, "moe_router_topk", ffn.path_of("moe_top_k"));
  map_key(imp, "moe_ffn_hidden_size", ffn.path_of("ffn_hidden_size"));
  return imp;
}

/// Llama 4: the text model sits in text_config (model_type llama4) or at the top (llama4_text).
/// MoE layers carry one shared expert of the routed width; dense layers use intermediate_size_mlp.
Imported read_llama4(const Json& cfg) {
  const ObjectReader top = lenient_reader(cfg, "");
  const ObjectReader r = top.has("text_config") ? nested(top, "text_config") : top;
  Imported imp = read_decoder_core(r);
  ModelSpec& s = imp.spec;
  s.ffn_hidden_size = r.require_int("intermediate_size_mlp", lim::kFfn);
  map_key(imp, "ffn_hidden_size", r.path_of("intermediate_size_mlp"));
  s.num_moe_experts = r.get_int("num_local_experts", 0, lim::kExperts);
  map_key(imp, "num_moe_experts", r.path_of("num_local_experts"));
  if (s.is_moe()) {
    s.moe_router_topk = r.require_int("num_experts_per_tok", lim::kTopk);
    map_key(imp, "moe_router_topk", r.path_of("num_experts_per_tok"));
    s.moe_ffn_hidden_size = r.require_int("intermediate_size", lim::kFfn);
    map_key(imp, "moe_ffn_hidden_size", r.path_of("intermediate_size"));
    s.moe_shared_expert_intermediate_size = s.moe_ffn_hidden_size;
    if (r.has("moe_layers") && !r.get("moe_layers")->is_null()) {
      s.moe_layer_pattern.assign(static_cast<std::size_t>(s.num_layers), false);
      for (std::int64_t i : read_layer_indices(r, "moe_layers", s.num_layers)) {
        s.moe_layer_pattern[static_cast<std::size_t>(i)] = true;
      }
      map_key(imp, "moe_layer_freq", r.path_of("moe_layers"));
    } else {
      const std::int64_t step = r.get_int("interleave_moe_layer_step", 1, lim::kLayerStep);
      s.moe_layer_pattern = model::moe_layer_pattern({0, step, step - 1}, s.num_layers);
      map_key(imp, "moe_layer_freq", r.path_of("interleave_moe_layer_step"));
    }
  }
  // Chunked attention (queries see their own chunk) on the RoPE layers; every
  // no_rope_layer_interval-th layer is a NoPE layer with full attention. Read as a sliding window
  // of the chunk size: the same memory and at most as many keys per query, so attention FLOPs are
  // over-counted by up to 2x for sequences much longer than a chunk, never under-counted.
  if (const auto chunk = r.optional_int("attention_chunk_size", lim::kWindow); chunk && *chunk > 0) {
    s.sliding_window = *chunk;
    s.sliding_window_pattern = r.get_int("no_rope_layer_interval", 4, lim::kLayerStep);
    if (const Json* v = r.get("no_rope_layers"); v && !v->is_null()) {
      std::vector<bool> expected;
      for (std::int64_t i = 0; i < s.num_layers; ++i) expected.push_back((i + 1) % s.sliding_window_pattern != 0);
      std::vector<bool> given;
      if (v->is_array() && v->size() == expected.size()) {
        for (std::size_t i = 0; i < v->size(); ++i) {
          const std::string path = r.path_of("no_rope_layers") + "/" + std::to_string(i);
          given.push_back(to_int((*v)[i], path, {0, 1}) == 1);
        }
      }
      if (given != expected) {
        throw InputError(r.path_of("no_rope_layers"), describe_value(*v),
                         "only the periodic NoPE layout of no_rope_layer_interval (" + str(s.sliding_window_pattern) +
                             ") is supported",
                         str(s.num_layers) + " entries, 0 at every " + str(s.sliding_window_pattern) + "th layer");
      }
    }
    map_key(imp, "sliding_window", r.path_of("attention_chunk_size"));
    map_key(imp, "sliding_window_pattern", r.path_of("no_rope_layer_interval"));
  }
  return imp;
}

/// ESM-2 (EsmConfig): a bidirectional encoder with GELU MLPs and biases; the masked-LM decoder is
/// tied to the embedding.
Imported read_esm(const Json& cfg) {
  const ObjectReader r = lenient_reader(cfg, "");
  Imported imp;
  ModelSpec& s = imp.spec;
  read_sizes(r, imp);
  read_dense_ffn(r, imp);
  if (s.hidden_size % s.num_attention_heads != 0) {
    throw InputError(r.path_of("hidden_size"), str(s.hidden_size),
                     "hidden_size must be divisible by num_attention_heads (" + str(s.num_attention_heads) + ")");
  }
  s.kv_channels = s.hidden_size / s.num_attention_heads;
  s.gated_linear_unit = false;
  s.causal = false;
  s.add_bias_linear = true;
  // EsmConfig.hidden_dropout_prob (HF default 0.1; the ESM-2 checkpoints' configs say 0.0).
  s.hidden_dropout = r.get_number("hidden_dropout_prob", 0.1, lim::kDropout);
  s.share_embeddings_and_output_weights = r.get_bool("tie_word_embeddings", true);
  return imp;
}

/// PhiMoE is Mixtral-shaped; its attention_bias becomes add_bias_linear, which also puts biases on
/// the experts (PhiMoE has none there): under 0.05 % of Phi-mini-MoE's weights.
Imported read_phimoe(const Json& cfg) {
  return read_all_moe(lenient_reader(cfg, ""), {"num_local_experts", "num_experts"}, true);
}

constexpr std::array kFamilies = {
    Family{"dbrx", read_dbrx},           Family{"deepseek_v2", read_deepseek}, Family{"deepseek_v3", read_deepseek},
    Family{"esm", read_esm},             Family{"kimi_k2", read_deepseek},     Family{"llama", read_llama},
    Family{"llama4", read_llama4},       Family{"llama4_text", read_llama4},   Family{"mistral", read_mistral},
    Family{"mixtral", read_mixtral},     Family{"olmoe", read_olmoe},          Family{"phimoe", read_phimoe},
    Family{"qwen2", read_qwen_dense},    Family{"qwen2_moe", read_qwen_moe},   Family{"qwen3", read_qwen_dense},
    Family{"qwen3_moe", read_qwen_moe},
};

}  // namespace

std::span<const Family> families() { return kFamilies; }

ObjectReader lenient_reader(const Json& value, const std::string& path) {
  std::vector<std::string> keys;
  if (value.is_object()) {
    for (const auto& item : value.items()) keys.push_back(item.key());
  }
  return ObjectReader(value, path, std::move(keys));
}

}  // namespace moesim::config::hf
