#include "config/validation_workload_loader.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"
#include "scenario/scenario.hpp"

namespace moesim::config {
namespace {

// Bounds far above any proxy of one machine, low enough that no product of them overflows.
constexpr IntRange kGpus{1, 72};
constexpr std::int64_t kMaxDim = std::int64_t{1} << 20;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 24;
const std::vector<std::string> kPrecisions{"bf16", "fp8", "mxfp8", "nvfp4"};
const std::vector<std::string> kRecompute = names_of(kRecomputeGranularityNames);  ///< the scenario's spelling
/// Megatron --recompute-modules, spelled as in a scenario (the runner refuses those it cannot replay).
/// Listed in the order this file's messages have always shown, mla_up_proj last, not the table's.
const std::vector<std::string> kModules = [] {
  using M = RecomputeModule;
  std::vector<std::string> out;
  for (M m : {M::kCoreAttn, M::kMoeAct, M::kLayernorm, M::kMlp, M::kMoe, M::kSharedExperts, M::kMlaUpProj}) {
    out.emplace_back(to_string(m));
  }
  return out;
}();

const Json& array_at(const Json& v, const std::string& path, std::int64_t size, const std::string& rule) {
  if (!v.is_array()) {
    throw InputError(path, describe_value(v), "expected an array, got " + describe_type(v), rule);
  }
  if (static_cast<std::int64_t>(v.size()) != size) {
    throw InputError(path, fmt::format("{} entries", v.size()), rule, std::to_string(size));
  }
  return v;
}

std::vector<std::string> read_modules(const ObjectReader& r, bool selective) {
  const std::string path = r.path_of("recompute_modules");
  const Json* v = r.get("recompute_modules");
  if (!v) throw InputError(path, "", "required field is missing", "[] or, under selective, " + join(kModules));
  if (!v->is_array()) throw InputError(path, describe_value(*v), "expected an array, got " + describe_type(*v));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const Json& m = (*v)[i];
    const std::string at = fmt::format("{}/{}", path, i);
    if (!m.is_string()) throw InputError(at, describe_value(m), "expected a string, got " + describe_type(m));
    const std::string name = m.get<std::string>();
    if (std::find(kModules.begin(), kModules.end(), name) == kModules.end()) {
      throw InputError(at, json_quoted(name), "not a module the proxy runner recomputes", join(kModules));
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      throw InputError(at, json_quoted(name), "listed twice", join(kModules));
    }
    out.push_back(name);
  }
  if (selective && out.empty()) {
    throw InputError(path, "[]", "selective recompute needs the modules it recomputes", join(kModules));
  }
  if (!selective && !out.empty()) {
    throw InputError(path, describe_value(*v), "modules are recomputed under selective recompute only", "[]");
  }
  return out;
}

std::vector<std::vector<std::vector<std::vector<std::int64_t>>>> read_routed_copies(const ObjectReader& r,
                                                                                   const ValidationWorkload& w) {
  const std::string path = r.path_of("routed_copies");
  const Json* v = r.get("routed_copies");
  if (!v) throw InputError(path, "", "required field is missing", "[layer][micro-batch][source][expert] copies");
  std::vector<std::vector<std::vector<std::vector<std::int64_t>>>> out;
  if (!w.moe) {
    array_at(*v, path, 0, "a dense stack routes nothing");
    return out;
  }
  const std::int64_t row_sum = w.tokens_per_rank * w.topk;
  const IntRange entry{0, w.tokens_per_rank};
  array_at(*v, path, w.layers, "one entry per layer");
  for (std::int64_t l = 0; l < w.layers; ++l) {
    const std::string lp = fmt::format("{}/{}", path, l);
    const Json& layer = array_at((*v)[static_cast<std::size_t>(l)], lp, w.microbatches, "one entry per micro-batch");
    auto& layer_out = out.emplace_back();
    for (std::int64_t mb = 0; mb < w.microbatches; ++mb) {
      const std::string mp = fmt::format("{}/{}", lp, mb);
      const Json& sources = array_at(layer[static_cast<std::size_t>(mb)], mp, w.ep, "one row per source EP rank");
      auto& mb_out = layer_out.emplace_back();
      for (std::int64_t src = 0; src < w.ep; ++src) {
        const std::string sp = fmt::format("{}/{}", mp, src);
        const Json& row = array_at(sources[static_cast<std::size_t>(src)], sp, w.experts, "one count per expert");
        auto& row_out = mb_out.emplace_back();
        row_out.reserve(static_cast<std::size_t>(w.experts));
        std::int64_t sum = 0;
        for (std::int64_t e = 0; e < w.experts; ++e) {
          // At most tokens_per_rank: a token picks an expert once.
          row_out.push_back(to_int(row[static_cast<std::size_t>(e)], fmt::format("{}/{}", sp, e), entry));
          sum += row_out.back();
        }
        if (sum != row_sum) {
          throw InputError(sp, fmt::format("sum {}", sum),
                           fmt::format("a source routes tokens_per_rank × topk copies ({} × {})", w.tokens_per_rank,
                                       w.topk),
                           std::to_string(row_sum));
        }
      }
    }
  }
  return out;
}

/// A field that must be 0 in this kind of stack.
std::int64_t require_zero(const ObjectReader& r, std::string_view key, const std::string& rule) {
  const std::int64_t v = r.require_int(key, {0, kMaxDim});
  if (v != 0) throw InputError(r.path_of(key), std::to_string(v), rule, "0");
  return v;
}

ValidationWorkload parse(const Json& j) {
  const ObjectReader r(j, "",
                       {"schema", "scenario", "gpu", "precision", "recompute", "recompute_modules", "attention",
                        "gpus", "tp", "ep", "dp", "layers", "microbatches", "steps", "warmup", "micro_batch_size", "seq",
                        "tokens_per_rank", "hidden", "heads", "kv_heads", "head_dim", "q_lora_rank",
                        "kv_lora_rank", "qk_rope_head_dim", "v_head_dim", "gated", "moe", "ffn",
                        "experts", "topk", "expert_ffn", "shared_ffn", "router_scoring", "seed", "routed_copies"});
  const std::string schema = r.require_string("schema");
  if (schema != "moesim.validation-workload/1") {
    throw InputError("/schema", schema, "not a validation workload", "moesim.validation-workload/1");
  }
  ValidationWorkload w;
  w.scenario = r.require_nonempty_string("scenario", "must name the proxy scenario");
  w.gpu = r.require_nonempty_string("gpu", "must name the GPU preset the proxy is sized for (e.g. h200-sxm)");
  w.precision = r.require_enum("precision", kPrecisions);
  w.recompute = r.require_enum("recompute", kRecompute);
  w.recompute_modules = read_modules(r, w.recompute == "selective");
  w.attention = r.require_enum("attention", names_of(kAttentionBackendNames));

  w.gpus = r.require_int("gpus", kGpus);
  w.tp = r.require_int("tp", kGpus);
  w.ep = r.require_int("ep", kGpus);
  w.dp = r.require_int("dp", kGpus);
  if (w.tp * w.dp != w.gpus) {
    throw InputError("/dp", std::to_string(w.dp), "gpus = tp × dp (one stage)", std::to_string(w.gpus / w.tp));
  }
  if (w.gpus % w.ep != 0) {
    throw InputError("/ep", std::to_string(w.ep), "ep must divide gpus", "divisors of " + std::to_string(w.gpus));
  }
  w.layers = r.require_int("layers", {1, 1000});
  w.microbatches = r.require_int("microbatches", {1, 64});
  w.steps = r.require_int("steps", {1, 10000});
  w.warmup = r.require_int("warmup", {0, 1000});

  w.micro_batch_size = r.require_int("micro_batch_size", {1, 4096});
  w.seq = r.require_int("seq", {1, kMaxDim});
  w.tokens_per_rank = r.require_int("tokens_per_rank", {1, kMaxTokens});
  const std::int64_t tokens = w.micro_batch_size * w.seq;
  if (w.tokens_per_rank != tokens && w.tokens_per_rank * w.tp != tokens) {
    throw InputError("/tokens_per_rank", std::to_string(w.tokens_per_rank),
                     "micro_batch_size × seq, ÷ tp with sequence parallelism",
                     w.tp > 1 && tokens % w.tp == 0 ? fmt::format("{} or {}", tokens, tokens / w.tp)
                                                    : std::to_string(tokens));
  }
  w.hidden = r.require_int("hidden", {1, kMaxDim});
  w.heads = r.require_int("heads", {1, 4096});
  w.kv_heads = r.require_int("kv_heads", {1, w.heads});
  if (w.heads % w.kv_heads != 0) {
    throw InputError("/kv_heads", std::to_string(w.kv_heads), "kv_heads must divide heads",
                     "divisors of " + std::to_string(w.heads));
  }
  w.head_dim = r.require_int("head_dim", {1, 1024});
  w.kv_lora_rank = r.require_int("kv_lora_rank", {0, kMaxDim});
  if (w.kv_lora_rank > 0) {
    if (w.kv_heads != w.heads) {
      throw InputError("/kv_heads", std::to_string(w.kv_heads),
                       "multi-latent attention (kv_lora_rank > 0) gives every head its own key and value",
                       std::to_string(w.heads));
    }
    w.q_lora_rank = r.require_int("q_lora_rank", {0, kMaxDim});
    w.qk_rope_head_dim = r.require_int("qk_rope_head_dim", {0, w.head_dim - 1});
    w.v_head_dim = r.require_int("v_head_dim", {1, 1024});
  } else {
    for (const char* key : {"q_lora_rank", "qk_rope_head_dim", "v_head_dim"}) {
      (void)require_zero(r, key, "multi-latent attention fields need kv_lora_rank > 0");
    }
  }
  w.gated = r.require_bool("gated");
  w.moe = r.require_bool("moe");
  if (w.moe) {
    w.ffn = require_zero(r, "ffn", "an MoE stack has no dense MLP");
    w.experts = r.require_int("experts", {1, 1024});
    if (w.experts % w.ep != 0) {
      throw InputError("/experts", std::to_string(w.experts), "ep must divide the experts",
                       "multiples of " + std::to_string(w.ep));
    }
    w.topk = r.require_int("topk", {1, w.experts});
    w.expert_ffn = r.require_int("expert_ffn", {1, kMaxDim});
    w.shared_ffn = r.require_int("shared_ffn", {0, kMaxDim});
  } else {
    w.ffn = r.require_int("ffn", {1, kMaxDim});
    for (const char* key : {"experts", "topk", "expert_ffn", "shared_ffn"}) {
      (void)require_zero(r, key, "a dense stack (moe false) has no experts");
    }
  }
  w.router_scoring = r.require_enum("router_scoring", {"softmax", "sigmoid"});
  w.seed = static_cast<std::uint64_t>(r.require_int("seed", {0, std::numeric_limits<std::int64_t>::max()}));
  w.routed_copies = read_routed_copies(r, w);
  return w;
}

}  // namespace

ValidationWorkload parse_validation_workload(const std::string& text, const std::string& file) {
  const Json j = parse_json_text(text, file);
  try {
    return parse(j);
  } catch (InputError& e) {
    throw e.in_file(file);
  }
}

ValidationWorkload load_validation_workload(const std::string& path) {
  return parse_validation_workload(read_text_file(path), path);
}

}  // namespace moesim::config
