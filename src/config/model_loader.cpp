#include "config/model_loader.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "config/embedded_json.hpp"
#include "config/model_limits.hpp"
#include "core/embedded_files.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "model/model_layer_pattern.hpp"

namespace moesim::config {

namespace {

namespace lim = model_limits;
using model::ModelSpec;

constexpr std::string_view kPresetDir = "src/model/presets/";
constexpr std::string_view kPresetExt = ".json";

std::string str(std::int64_t v) { return std::to_string(v); }

const std::vector<std::string>& definition_keys() {
  static const std::vector<std::string> keys = {
      "name", "source", "num_layers", "hidden_size", "num_attention_heads", "num_query_groups", "kv_channels",
      "ffn_hidden_size", "gated_linear_unit", "vocab_size", "causal", "add_bias_linear", "hidden_dropout", "num_moe_experts",
      "moe_router_topk", "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size", "moe_layer_freq",
      "first_k_dense", "mtp_num_layers", "multi_latent_attention", "share_embeddings_and_output_weights",
      "sliding_window", "sliding_window_pattern"};
  return keys;
}

/// What an object of definition keys said beyond the fields it sets directly: which derived fields
/// were given explicitly, and how the MoE layers are laid out.
struct Readout {
  bool kv_channels = false;
  bool num_query_groups = false;
  bool moe_ffn_hidden_size = false;
  std::optional<std::int64_t> layer_freq;
  std::optional<std::vector<bool>> layer_list;
  std::optional<std::int64_t> first_k_dense;
};

void read_layer_freq(const ObjectReader& r, Readout& out) {
  const Json* v = r.get("moe_layer_freq");
  if (!v || v->is_null()) return;
  const std::string path = r.path_of("moe_layer_freq");
  if (v->is_array()) {
    // Bounded before anything is allocated: one entry per layer at most.
    if (v->size() > static_cast<std::size_t>(lim::kLayers.max)) {
      throw InputError(path, describe_value(*v), "too many entries", "at most " + str(lim::kLayers.max) + " entries");
    }
    std::vector<bool> list;
    list.reserve(v->size());
    for (std::size_t i = 0; i < v->size(); ++i) list.push_back(to_int((*v)[i], path + "/" + std::to_string(i), {0, 1}) == 1);
    out.layer_list = std::move(list);
    return;
  }
  if (!v->is_number()) {
    throw InputError(path, describe_value(*v), "expected an integer or a list of 0/1 per layer, got " + describe_type(*v));
  }
  out.layer_freq = to_int(*v, path, lim::kLayerStep);
}

/// A partial object refines the base's MLA (an override such as {"q_lora_rank": 0}); without a base
/// every width except the optional query latent is required.
std::optional<model::MlaSpec> read_mla(const ObjectReader& r, const std::optional<model::MlaSpec>& base) {
  const Json* v = r.get("multi_latent_attention");
  if (!v) return base;
  if (v->is_null()) return std::nullopt;
  const ObjectReader m(*v, r.path_of("multi_latent_attention"),
                       {"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim"});
  model::MlaSpec out = base.value_or(model::MlaSpec{});
  auto field = [&](const char* key, std::int64_t& dst, IntRange range) {
    dst = base ? m.get_int(key, dst, range) : m.require_int(key, range);
  };
  out.q_lora_rank = m.get_int("q_lora_rank", out.q_lora_rank, lim::kLatentRankOrZero);
  field("kv_lora_rank", out.kv_lora_rank, lim::kLatentRank);
  field("qk_head_dim", out.qk_head_dim, lim::kHeadDim);
  field("qk_pos_emb_head_dim", out.qk_pos_emb_head_dim, lim::kHeadDimOrZero);
  field("v_head_dim", out.v_head_dim, lim::kHeadDim);
  return out;
}

void read_keys(const ObjectReader& r, ModelSpec& s, Readout& out) {
  auto set_int = [&](const char* key, std::int64_t& dst, IntRange range) {
    if (auto v = r.optional_int(key, range)) dst = *v;
  };
  // null switches a feature off in an override ({"preset": "...", "sliding_window": null}).
  auto set_int_or_off = [&](const char* key, std::int64_t& dst, IntRange range) {
    if (const Json* v = r.get(key); v && v->is_null()) dst = 0;
    set_int(key, dst, range);
  };
  auto set_bool = [&](const char* key, bool& dst) { dst = r.get_bool(key, dst); };

  s.name = r.get_string("name", s.name);
  s.source = r.get_string("source", s.source);
  set_int("num_layers", s.num_layers, lim::kLayers);
  set_int("hidden_size", s.hidden_size, lim::kHidden);
  set_int("num_attention_heads", s.num_attention_heads, lim::kHeads);
  set_int("num_query_groups", s.num_query_groups, lim::kHeads);
  set_int("kv_channels", s.kv_channels, lim::kHeadDim);
  set_int("ffn_hidden_size", s.ffn_hidden_size, lim::kFfnOrZero);
  set_bool("gated_linear_unit", s.gated_linear_unit);
  set_int("vocab_size", s.vocab_size, lim::kVocab);
  set_bool("causal", s.causal);
  set_bool("add_bias_linear", s.add_bias_linear);
  s.hidden_dropout = r.get_number("hidden_dropout", s.hidden_dropout, lim::kDropout);
  set_int_or_off("num_moe_experts", s.num_moe_experts, lim::kExperts);
  set_int("moe_router_topk", s.moe_router_topk, lim::kTopk);
  set_int("moe_ffn_hidden_size", s.moe_ffn_hidden_size, lim::kFfn);
  set_int_or_off("moe_shared_expert_intermediate_size", s.moe_shared_expert_intermediate_size, lim::kFfnOrZero);
  set_int_or_off("mtp_num_layers", s.mtp_num_layers, lim::kMtpLayers);
  s.multi_latent_attention = read_mla(r, s.multi_latent_attention);
  set_bool("share_embeddings_and_output_weights", s.share_embeddings_and_output_weights);
  set_int_or_off("sliding_window", s.sliding_window, lim::kWindow);
  set_int_or_off("sliding_window_pattern", s.sliding_window_pattern, lim::kWindowPattern);

  out.kv_channels = r.optional_int("kv_channels", lim::kHeadDim).has_value();
  out.num_query_groups = r.optional_int("num_query_groups", lim::kHeads).has_value();
  out.moe_ffn_hidden_size = r.optional_int("moe_ffn_hidden_size", lim::kFfn).has_value();
  read_layer_freq(r, out);
  out.first_k_dense = r.optional_int("first_k_dense", lim::kLayerCount);
}

/// kv_channels when none is given: hidden / heads as in Megatron; for MLA the value head width,
/// as the per-head width of the attention output (q/k heads are qk_head_dim + qk_pos_emb_head_dim).
std::optional<std::int64_t> derived_kv_channels(const ModelSpec& s) {
  if (s.multi_latent_attention) return s.multi_latent_attention->v_head_dim;
  if (s.num_attention_heads < 1 || s.hidden_size % s.num_attention_heads != 0) return std::nullopt;
  return s.hidden_size / s.num_attention_heads;
}

/// Fills the fields that default from others. In an override (`base` set) a field follows the new
/// values only where the base had it at its default, so {"preset": "llama-3-8b", "hidden_size": 2048}
/// halves the head dim while Qwen3's explicit head dim of 128 stays.
void derive_defaults(ModelSpec& s, const Readout& in, const ModelSpec* base, const ObjectReader& r) {
  if (!in.kv_channels && (!base || derived_kv_channels(*base) == base->kv_channels)) {
    const auto kv = derived_kv_channels(s);
    if (!kv) {
      throw InputError(r.path_of("kv_channels"), "",
                       "kv_channels is required when hidden_size (" + str(s.hidden_size) +
                           ") is not divisible by num_attention_heads (" + str(s.num_attention_heads) + ")",
                       "integers from 1 to " + str(lim::kHeadDim.max));
    }
    s.kv_channels = *kv;
  }
  if (!in.num_query_groups && (!base || base->num_query_groups == base->num_attention_heads || s.multi_latent_attention)) {
    s.num_query_groups = s.num_attention_heads;
  }
  // Megatron's moe_ffn_hidden_size defaults to ffn_hidden_size; a dense model keeps 0 so that it
  // compares equal however it was written (preset, HF config).
  if (!in.moe_ffn_hidden_size &&
      (!base || base->moe_ffn_hidden_size == 0 || base->moe_ffn_hidden_size == base->ffn_hidden_size)) {
    s.moe_ffn_hidden_size = s.is_moe() ? s.ffn_hidden_size : 0;
  }
}

void build_layer_pattern(ModelSpec& s, const Readout& in, const ModelSpec* base, const ObjectReader& r) {
  const bool layout_given = in.layer_freq || in.layer_list || in.first_k_dense;
  if (!s.is_moe() && !layout_given) {
    s.moe_layer_pattern.clear();
    return;
  }
  if (in.first_k_dense) {
    if (!s.is_moe()) {
      throw InputError(r.path_of("first_k_dense"), str(*in.first_k_dense), "first_k_dense needs num_moe_experts > 0");
    }
    if (*in.first_k_dense > s.num_layers) {
      throw InputError(r.path_of("first_k_dense"), str(*in.first_k_dense),
                       "first_k_dense must not exceed num_layers (" + str(s.num_layers) + ")",
                       "integers from 0 to " + str(s.num_layers));
    }
  }
  if (in.layer_list) {
    if (static_cast<std::int64_t>(in.layer_list->size()) != s.num_layers) {
      throw InputError(r.path_of("moe_layer_freq"), str(static_cast<std::int64_t>(in.layer_list->size())) + " entries",
                       "moe_layer_freq lists one entry per layer: num_layers is " + str(s.num_layers),
                       str(s.num_layers) + " entries");
    }
    s.moe_layer_pattern = *in.layer_list;
    for (std::int64_t i = 0; i < in.first_k_dense.value_or(0); ++i) s.moe_layer_pattern[static_cast<std::size_t>(i)] = false;
    return;
  }
  const std::optional<model::MoeLayerRule> base_rule =
      base && !base->moe_layer_pattern.empty() ? model::infer_moe_layer_rule(base->moe_layer_pattern)
                                               : std::optional<model::MoeLayerRule>(model::MoeLayerRule{});
  std::optional<model::MoeLayerRule> rule = base_rule;
  if (in.layer_freq) {
    rule = model::MoeLayerRule{0, *in.layer_freq, 0};  // Megatron: layer i is MoE when i % k == 0
    // A dense prefix longer than one period is the base's first_k_dense (DeepSeek's 3 layers) and
    // survives a new frequency; a shorter one is only the phase of the old period.
    if (base_rule && base_rule->first_dense >= base_rule->period) rule->first_dense = base_rule->first_dense;
  }
  if (!rule) {
    // The base's pattern is an irregular list: it cannot be stretched to another depth.
    if (s.num_layers != base->num_layers) {
      throw InputError(r.path_of("num_layers"), str(s.num_layers),
                       "the base model's MoE layer pattern is an explicit list of " + str(base->num_layers) +
                           " entries: give moe_layer_freq for the new num_layers",
                       str(base->num_layers) + ", or a moe_layer_freq");
    }
    s.moe_layer_pattern = base->moe_layer_pattern;
    for (std::int64_t i = 0; i < in.first_k_dense.value_or(0); ++i) s.moe_layer_pattern[static_cast<std::size_t>(i)] = false;
    return;
  }
  if (in.first_k_dense) rule->first_dense = *in.first_k_dense;
  s.moe_layer_pattern = model::moe_layer_pattern(*rule, s.num_layers);
}

void validate_under(const ModelSpec& s, const std::string& path) {
  try {
    model::validate(s);
  } catch (InputError& e) {
    e.under(path);
    throw;
  }
}

ModelSpec read_definition(ModelSpec s, const ObjectReader& r, const ModelSpec* base) {
  Readout in;
  read_keys(r, s, in);
  if (s.is_moe() && s.moe_router_topk == 0) {
    // Megatron would default to 2; a silent top-k changes every number moesim reports.
    throw InputError(r.path_of("moe_router_topk"), "", "required when num_moe_experts > 0",
                     "integers from 1 to " + str(s.num_moe_experts));
  }
  derive_defaults(s, in, base, r);
  build_layer_pattern(s, in, base, r);
  if (!s.is_moe()) {
    // A dense model has no MoE widths: left-overs of an MoE base ({"preset": "mixtral-8x7b",
    // "num_moe_experts": 0}) would make equal models compare unequal.
    s.moe_router_topk = 0;
    s.moe_ffn_hidden_size = 0;
    s.moe_shared_expert_intermediate_size = 0;
  }
  validate_under(s, r.path());
  return s;
}

}  // namespace

std::vector<std::string> model_preset_names() { return embedded_json_names(kPresetDir); }

model::ModelSpec load_model_preset(const std::string& name, const std::string& path) {
  const std::string file = std::string(kPresetDir) + name + std::string(kPresetExt);
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path != file) continue;
    try {
      return parse_model_definition(parse_json_text(std::string(f.content), file), "");
    } catch (InputError& e) {
      e.in_file(file);
      throw;
    }
  }
  throw InputError(path, describe_value(Json(name)), "unknown model preset" + did_you_mean(name, model_preset_names()),
                   join(model_preset_names()));
}

model::ModelSpec parse_model_definition(const Json& obj, const std::string& path) {
  const ObjectReader r(obj, path, definition_keys());
  // Only these four have no default; the reader throws "required field is missing" with the range.
  (void)r.require_int("num_layers", lim::kLayers);
  (void)r.require_int("hidden_size", lim::kHidden);
  (void)r.require_int("num_attention_heads", lim::kHeads);
  (void)r.require_int("vocab_size", lim::kVocab);
  ModelSpec blank;
  blank.name = "custom";
  return read_definition(std::move(blank), r, nullptr);
}

model::ModelSpec apply_model_overrides(model::ModelSpec base, const Json& obj, const std::string& path,
                                       const std::string& skip_key) {
  std::vector<std::string> keys = definition_keys();
  if (!skip_key.empty()) keys.push_back(skip_key);
  const ObjectReader r(obj, path, std::move(keys));
  const ModelSpec original = base;
  return read_definition(std::move(base), r, &original);
}

model::ModelSpec resolve_model_field(const Json& value, const std::string& path, const std::filesystem::path& base_dir,
                                     std::string* model_ref) {
  auto set_ref = [&](std::string ref) {
    if (model_ref) *model_ref = std::move(ref);
  };
  set_ref("");
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    ModelSpec spec = load_model_preset(name, path);
    set_ref(name);
    return spec;
  }
  if (!value.is_object()) {
    throw InputError(path, describe_value(value),
                     "expected a preset name, {\"preset\": ...}, {\"hf_config\": ...} or a full definition, got " +
                         describe_type(value),
                     join(model_preset_names()));
  }
  const auto preset = value.find("preset");
  const auto hf = value.find("hf_config");
  if (preset != value.end() && hf != value.end()) {
    throw InputError(path + "/hf_config", describe_value(*hf), "give either \"preset\" or \"hf_config\", not both");
  }
  if (preset != value.end()) {
    if (!preset->is_string()) {
      throw InputError(path + "/preset", describe_value(*preset), "expected a string, got " + describe_type(*preset),
                       join(model_preset_names()));
    }
    const std::string name = preset->get<std::string>();
    ModelSpec spec = apply_model_overrides(load_model_preset(name, path + "/preset"), value, path, "preset");
    set_ref(name);
    return spec;
  }
  if (hf != value.end()) {
    if (!hf->is_string()) {
      throw InputError(path + "/hf_config", describe_value(*hf),
                       "expected a string (the path of a config.json), got " + describe_type(*hf));
    }
    const std::string written = hf->get<std::string>();
    std::filesystem::path file(written);
    if (file.is_relative()) file = base_dir / file;
    ModelSpec spec = apply_model_overrides(import_hf_config_file(file.string()), value, path, "hf_config");
    set_ref("hf_config:" + written);
    return spec;
  }
  return parse_model_definition(value, path);
}

}  // namespace moesim::config
