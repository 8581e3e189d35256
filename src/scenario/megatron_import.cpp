// A Megatron-LM command line read into a scenario (`moesim scenario from-megatron`): the flags
// moesim models read strictly, the others listed as ignored.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/format.hpp"
#include "scenario/megatron_args.hpp"
#include "scenario/megatron_flags.hpp"

namespace moesim {
namespace {

struct Flag {
  std::string name;
  std::vector<std::string> values;
  bool used = false;
};

/// Tokens of the command line: comments dropped, `\`-newlines joined, quotes removed.
std::vector<std::string> tokenize(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_token = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        cur += c;
      }
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
      continue;
    }
    if (c == '#' && !in_token) {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) continue;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_token) out.push_back(std::move(cur)), cur.clear(), in_token = false;
      continue;
    }
    cur += c;
    in_token = true;
  }
  if (in_token) out.push_back(std::move(cur));
  return out;
}

class ArgReader {
 public:
  ArgReader(const std::string& text, std::string file) : file_(std::move(file)) {
    std::vector<std::string> tokens = tokenize(text);
    // The launcher's part (torchrun and its options, python) ends at the training script.
    std::size_t start = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].ends_with(".py")) start = i + 1;
    }
    for (std::size_t i = start; i < tokens.size(); ++i) {
      std::string t = tokens[i];
      if (t.starts_with("--")) {
        std::string value;
        if (const auto eq = t.find('='); eq != std::string::npos) value = t.substr(eq + 1), t.resize(eq);
        if (find(t) != nullptr) throw error(t, "", "a flag given twice", "each flag once");
        flags_.push_back({t, {}, false});
        if (!value.empty()) flags_.back().values.push_back(value);
      } else if (flags_.empty()) {
        throw error("command line", t, "the arguments start with a flag (after the launcher and the training script)",
                    "torchrun ... pretrain_gpt.py --flag value ...");
      } else {
        flags_.back().values.push_back(t);
      }
    }
  }

  [[nodiscard]] bool has(std::string_view name) {
    Flag* f = find(name);
    if (f == nullptr) return false;
    f->used = true;
    if (!f->values.empty()) throw error(name, f->values.front(), "a switch takes no value", std::string(name));
    return true;
  }
  [[nodiscard]] std::optional<std::string> text(std::string_view name) {
    Flag* f = find(name);
    if (f == nullptr) return std::nullopt;
    f->used = true;
    if (f->values.size() != 1) {
      throw error(name, join_values(*f), "takes exactly one value", std::string(name) + " VALUE");
    }
    return f->values.front();
  }
  [[nodiscard]] std::optional<std::vector<std::string>> list(std::string_view name) {
    Flag* f = find(name);
    if (f == nullptr) return std::nullopt;
    f->used = true;
    if (f->values.empty()) throw error(name, "", "takes one or more values", std::string(name) + " A B ...");
    return f->values;
  }
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view name, std::int64_t min) {
    const auto t = text(name);
    if (!t) return std::nullopt;
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || ptr != t->data() + t->size() || v < min) {
      throw error(name, *t, "not an integer in range", fmt::format("an integer ≥ {}", min));
    }
    return v;
  }
  [[nodiscard]] std::int64_t required_integer(std::string_view name, std::int64_t min) {
    const auto v = integer(name, min);
    if (!v) throw error(name, "", "missing: moesim needs it to know the run", fmt::format("{} N (N ≥ {})", name, min));
    return *v;
  }
  [[nodiscard]] std::optional<double> number(std::string_view name, double min, double max) {
    const auto t = text(name);
    if (!t) return std::nullopt;
    double v = 0;
    const auto [ptr, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (ec != std::errc() || ptr != t->data() + t->size() || !std::isfinite(v) || v < min || v > max) {
      throw error(name, *t, "not a number in range", fmt::format("{} to {}", min, max));
    }
    return v;
  }
  template <typename E, std::size_t N>
  [[nodiscard]] std::vector<E> names(std::string_view name, const std::array<EnumName<E>, N>& table) {
    std::vector<E> out;
    for (const std::string& v : list(name).value_or(std::vector<std::string>{})) {
      const auto e = value_of(table, v);
      if (!e) throw error(name, v, "unknown value", join(names_of(table)));
      out.push_back(*e);
    }
    return out;
  }
  /// One of `allowed`; `fallback` when the flag is absent.
  [[nodiscard]] std::string choice(std::string_view name, std::initializer_list<std::string_view> allowed,
                                   std::string_view fallback) {
    const auto t = text(name);
    if (!t) return std::string(fallback);
    if (std::find(allowed.begin(), allowed.end(), *t) == allowed.end()) {
      std::string names;
      for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      throw error(name, *t, "unknown value", names);
    }
    return *t;
  }
  [[nodiscard]] InputError error(std::string_view flag, const std::string& value, const std::string& rule,
                                 const std::string& allowed) const {
    return InputError("argument " + std::string(flag), value, rule, allowed).in_file(file_);
  }
  [[nodiscard]] std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (const Flag& f : flags_) {
      if (!f.used) out.push_back(f.name);
    }
    return out;
  }

 private:
  Flag* find(std::string_view name) {
    for (Flag& f : flags_) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
  static std::string join_values(const Flag& f) {
    std::string out;
    for (const auto& v : f.values) out += (out.empty() ? "" : " ") + v;
    return out;
  }

  std::string file_;
  std::vector<Flag> flags_;
};

/// Megatron's --moe-layer-freq: an integer k (every k-th layer is MoE, from layer 0) or a python list
/// expression of 0/1 terms, each optionally repeated: "([0]*3+[1]*58)", "[1,0,1,0]".
std::vector<bool> parse_layer_freq(const std::string& text, std::int64_t layers, ArgReader& r) {
  const auto bad = [&](const std::string& rule) {
    return r.error(megatron_flag::kLayerFreq, text, rule, "an integer k ≥ 1, or a list such as ([0]*3+[1]*58) with one 0/1 per layer");
  };
  std::string t;
  for (char c : text) {
    if (c != ' ' && c != '(' && c != ')') t += c;
  }
  std::vector<bool> out;
  if (!t.empty() && t.front() != '[') {
    std::int64_t k = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), k);
    if (ec != std::errc() || ptr != t.data() + t.size() || k < 1) throw bad("not an integer ≥ 1 or a list");
    for (std::int64_t i = 0; i < layers; ++i) out.push_back(i % k == 0);
    return out;
  }
  std::size_t i = 0;
  while (i < t.size()) {
    if (t[i] != '[') throw bad("a term starts with [");
    const std::size_t close = t.find(']', i);
    if (close == std::string::npos) throw bad("an unclosed [");
    std::vector<bool> term;
    std::stringstream items(t.substr(i + 1, close - i - 1));
    std::string item;
    while (std::getline(items, item, ',')) {
      if (item != "0" && item != "1") throw bad("each entry is 0 or 1");
      term.push_back(item == "1");
    }
    i = close + 1;
    std::int64_t repeat = 1;
    if (i < t.size() && t[i] == '*') {
      std::size_t end = i + 1;
      while (end < t.size() && std::isdigit(static_cast<unsigned char>(t[end])) != 0) ++end;
      const auto [ptr, ec] = std::from_chars(t.data() + i + 1, t.data() + end, repeat);
      if (ec != std::errc() || repeat < 0 || repeat > layers) throw bad("a repeat count from 0 to num_layers");
      i = end;
    }
    for (std::int64_t k = 0; k < repeat; ++k) out.insert(out.end(), term.begin(), term.end());
    if (i < t.size()) {
      if (t[i] != '+') throw bad("terms are joined by +");
      ++i;
    }
  }
  if (static_cast<std::int64_t>(out.size()) != layers) {
    throw bad(fmt::format("{} entries for {} layers (--num-layers)", out.size(), layers));
  }
  return out;
}

model::ModelSpec read_model(ArgReader& r, std::int64_t seq) {
  model::ModelSpec m;
  m.name = "from-megatron";
  m.num_layers = r.required_integer(megatron_flag::kNumLayers, 1);
  m.hidden_size = r.required_integer(megatron_flag::kHiddenSize, 1);
  m.num_attention_heads = r.required_integer(megatron_flag::kHeads, 1);
  const std::optional<std::int64_t> ffn = r.integer(megatron_flag::kFfnHiddenSize, 0);
  m.ffn_hidden_size = ffn.value_or(4 * m.hidden_size);  // Megatron's default
  const bool gqa = r.has(megatron_flag::kGqa);
  const auto groups = r.integer(megatron_flag::kQueryGroups, 1);
  if (groups && !gqa) {
    throw r.error(megatron_flag::kQueryGroups, std::to_string(*groups), "Megatron reads it only with --group-query-attention",
                  "--group-query-attention --num-query-groups G");
  }
  m.num_query_groups = gqa ? groups.value_or(1) : m.num_attention_heads;
  m.kv_channels = r.integer(megatron_flag::kKvChannels, 1).value_or(m.hidden_size / m.num_attention_heads);
  m.gated_linear_unit = r.has(megatron_flag::kSwiglu);
  const auto vocab = r.integer(megatron_flag::kVocab, 1);
  if (!vocab) {
    throw r.error(megatron_flag::kVocab, "", "missing: moesim cannot read a tokenizer; give its vocabulary size (padded as Megatron pads it)",
                  "--vocab-size N");
  }
  m.vocab_size = *vocab;
  if (const auto positions = r.integer(megatron_flag::kMaxPositions, 1); positions && *positions < seq) {
    throw r.error(megatron_flag::kMaxPositions, std::to_string(*positions), "shorter than --seq-length", fmt::format("≥ {}", seq));
  }
  m.share_embeddings_and_output_weights = !r.has(megatron_flag::kUntie);
  m.add_bias_linear = !r.has(megatron_flag::kNoBias);
  m.hidden_dropout = r.number(megatron_flag::kHiddenDropout, 0.0, 1.0).value_or(0.1);
  if (r.has(megatron_flag::kMla)) {
    model::MlaSpec mla;
    mla.q_lora_rank = r.integer(megatron_flag::kQLora, 0).value_or(0);
    mla.kv_lora_rank = r.required_integer(megatron_flag::kKvLora, 1);
    mla.qk_head_dim = r.required_integer(megatron_flag::kQkHead, 1);
    mla.qk_pos_emb_head_dim = r.required_integer(megatron_flag::kQkPos, 1);
    mla.v_head_dim = r.required_integer(megatron_flag::kVHead, 1);
    m.multi_latent_attention = mla;
  }
  m.mtp_num_layers = r.integer(megatron_flag::kMtp, 0).value_or(0);
  m.num_moe_experts = r.integer(megatron_flag::kExperts, 0).value_or(0);
  if (m.is_moe()) {
    m.moe_router_topk = r.integer(megatron_flag::kTopk, 1).value_or(2);  // Megatron's default top-k
    m.moe_ffn_hidden_size = r.integer(megatron_flag::kMoeFfn, 1).value_or(m.ffn_hidden_size);
    m.moe_shared_expert_intermediate_size = r.integer(megatron_flag::kSharedExpert, 1).value_or(0);
    m.moe_layer_pattern = parse_layer_freq(r.text(megatron_flag::kLayerFreq).value_or("1"), m.num_layers, r);
    // No dense layer and no --ffn-hidden-size: nothing uses the dense width.
    if (!ffn && std::all_of(m.moe_layer_pattern.begin(), m.moe_layer_pattern.end(), [](bool b) { return b; })) {
      m.ffn_hidden_size = 0;
    }
  }
  return m;
}

Precision read_precision(ArgReader& r, Fp8Recipe& recipe) {
  const bool bf16 = r.has(megatron_flag::kBf16), fp16 = r.has(megatron_flag::kFp16);
  if (bf16 == fp16) {
    throw r.error(bf16 ? "--bf16 --fp16" : "--bf16", "", bf16 ? "two 16-bit precisions" : "missing: moesim models mixed precision (fp32 training is not modelled)",
                  "--bf16 or --fp16");
  }
  const auto fp4 = r.text(megatron_flag::kFp4Format);
  (void)r.choice(megatron_flag::kFp4Recipe, {"nvfp4"}, "nvfp4");  // the one NVFP4 recipe
  if (fp4) {
    if (*fp4 != "e2m1") throw r.error(megatron_flag::kFp4Format, *fp4, "unknown value", "e2m1");
    return Precision::kNvfp4;
  }

  const auto fp8 = r.text(megatron_flag::kFp8Format);
  const std::string fp8_recipe = r.choice(megatron_flag::kFp8Recipe, {"delayed", "tensorwise", "blockwise", "mxfp8"}, "delayed");
  if (!fp8) return fp16 ? Precision::kFp16 : Precision::kBf16;
  if (*fp8 != "hybrid" && *fp8 != "e4m3") throw r.error(megatron_flag::kFp8Format, *fp8, "unknown value", "hybrid, e4m3");
  if (fp8_recipe == "blockwise") return Precision::kFp8Blockwise;
  if (fp8_recipe == "mxfp8") return Precision::kMxfp8;
  recipe = fp8_recipe == "tensorwise" ? Fp8Recipe::kTensorwise : Fp8Recipe::kDelayed;
  return Precision::kFp8;
}

}  // namespace

MegatronImport scenario_from_megatron(const std::string& text, const std::string& file, const hw::SystemSpec& system) {
  ArgReader r(text, file);
  Scenario s;
  s.name = "from-megatron: " + file;
  s.system = system;
  s.training.seq_length = r.required_integer(megatron_flag::kSeqLength, 1);
  s.model = read_model(r, s.training.seq_length);
  try {
    model::validate(s.model);
  } catch (InputError& e) {
    throw e.under("/model").in_file(file);
  }
  auto& p = s.parallel;
  p.tp = r.integer(megatron_flag::kTp, 1).value_or(1);
  p.pp = r.integer(megatron_flag::kPp, 1).value_or(1);
  p.cp = r.integer(megatron_flag::kCp, 1).value_or(1);
  p.ep = r.integer(megatron_flag::kEp, 1).value_or(1);
  p.etp = r.integer(megatron_flag::kEtp, 1).value_or(p.tp);
  p.vpp = r.integer(megatron_flag::kVpp, 1).value_or(1);
  if (const auto per_stage = r.integer(megatron_flag::kLayersPerVirtualStage, 1)) {
    if (p.vpp > 1) throw r.error(megatron_flag::kLayersPerVirtualStage, std::to_string(*per_stage), "given with " + std::string(megatron_flag::kVpp), "one of the two");
    const std::int64_t per_rank = s.model.num_layers / p.pp;
    if (s.model.num_layers % p.pp != 0 || per_rank % *per_stage != 0) {
      throw r.error(megatron_flag::kLayersPerVirtualStage, std::to_string(*per_stage), "must divide the layers per pipeline rank",
                    fmt::format("a divisor of {}", per_rank));
    }
    p.vpp = per_rank / *per_stage;
  }
  p.sequence_parallel = r.has(megatron_flag::kSp);
  p.tp_comm_overlap = r.has(megatron_flag::kTpOverlap);
  p.account_for_embedding_in_pipeline_split = r.has(megatron_flag::kEmbeddingSlot);
  p.account_for_loss_in_pipeline_split = r.has(megatron_flag::kLossSlot);
  p.dp = std::max<std::int64_t>(1, system.gpus / p.model_parallel());
  s.training.micro_batch_size = r.integer(megatron_flag::kMicroBatch, 1).value_or(1);
  s.training.global_batch_size = r.required_integer(megatron_flag::kGlobalBatch, 1);
  const std::string backend = r.choice(megatron_flag::kAttentionBackend, {"flash", "fused", "unfused", "local", "auto"}, "auto");
  s.attention_backend = backend == "unfused" || backend == "local" ? AttentionBackend::kUnfused : AttentionBackend::kFlash;
  s.precision = read_precision(r, s.fp8_recipe);
  // Recompute.
  const std::string granularity = r.choice(megatron_flag::kRecomputeGranularity, {"full", "selective"}, "");
  const std::string method = r.choice(megatron_flag::kRecomputeMethod, {"uniform", "block"}, "uniform");
  const auto recompute_layers = r.integer(megatron_flag::kRecomputeLayers, 1);
  auto modules = r.names(megatron_flag::kRecomputeModules, kRecomputeModuleNames);
  if (granularity == "full") {
    if (method == "block") {
      throw r.error(megatron_flag::kRecomputeMethod, method, "moesim recomputes every layer under full recompute",
                    "uniform");
    }
    // --recompute-num-layers N checkpoints groups of N layers: every layer is still recomputed.
    (void)recompute_layers;
    s.recompute.granularity = RecomputeGranularity::kFull;
  } else if (granularity == "selective") {
    s.recompute.granularity = RecomputeGranularity::kSelective;
    s.recompute.modules = modules.empty() ? std::vector{RecomputeModule::kCoreAttn} : modules;
  }
  // MoE.
  auto& moe = s.moe;
  if (s.model.is_moe()) {
    const std::string type = r.choice(megatron_flag::kDispatcher, {"alltoall", "allgather", "flex"}, "allgather");
    if (type == kMegatronFlexDispatcher) {
      // Megatron's default backend is DeepEP; --moe-enable-deepep is the older switch for it.
      std::string backend_name = r.choice(megatron_flag::kFlexBackend, {"deepep", "hybridep"}, "deepep");
      if (r.has(megatron_flag::kEnableDeepep)) backend_name = "deepep";
      moe.dispatcher = *value_of(kDispatcherNames, backend_name);
      const auto sms = r.integer(moe.dispatcher == Dispatcher::kDeepep ? megatron_flag::kDeepepSms : megatron_flag::kHybridepSms, 1);
      if (sms) moe.dispatcher_sms = *sms;
    } else {
      moe.dispatcher = *value_of(kDispatcherNames, type);
    }
    moe.capacity_factor = r.number(megatron_flag::kCapacity, 0.0, 1024.0);
    moe.pad_to_capacity = r.has(megatron_flag::kPad);
    moe.grouped_gemm = r.has(megatron_flag::kGroupedGemm);
    moe.a2a_overlap = r.has(megatron_flag::kA2aOverlap);
  }
  // Optimizer.
  auto& o = s.optimizer;
  o.distributed = r.has(megatron_flag::kDistOpt);
  o.overlap_grad_reduce = r.has(megatron_flag::kOverlapGrad);
  o.overlap_param_gather = r.has(megatron_flag::kOverlapParam);
  o.fp8_param_gather = r.has(megatron_flag::kFp8Gather);
  o.fp4_param_gather = r.has(megatron_flag::kFp4Gather);
  const bool bf16_grads = r.has(megatron_flag::kGradBf16), fp32_grads = r.has(megatron_flag::kGradFp32);
  // Megatron reduces in fp32 under bf16 unless told otherwise (arguments.py); fp16 runs reduce fp16.
  o.grad_reduce_in_fp32 = fp32_grads || (!bf16_grads && s.precision != Precision::kFp16);
  o.store_param_remainders = r.has(megatron_flag::kPrecisionAware);
  // CUDA graphs: Megatron's per-layer graphs (local), its whole-iteration graph (full_iteration, or
  // the deprecated scope of that name), or Transformer Engine's graphs of the named modules (none named:
  // the whole layer).
  const std::string impl = r.choice(megatron_flag::kGraphImpl, {"none", "local", "transformer_engine", "full_iteration"}, "none");
  std::vector<std::string> scope_names = r.list(megatron_flag::kGraphModules).value_or(std::vector<std::string>{});
  if (auto deprecated = r.list(megatron_flag::kGraphScope)) {
    if (!scope_names.empty()) {
      throw r.error(megatron_flag::kGraphScope, (*deprecated)[0], "given with --cuda-graph-modules (its new name)", "one of the two");
    }
    scope_names = *deprecated;
  }
  std::vector<CudaGraphScope> scopes;
  bool whole_iteration = impl == "full_iteration";
  for (const std::string& n : scope_names) {
    if (n == "full" || n == "full_iteration") {
      whole_iteration = true;
      continue;
    }
    const auto scope = value_of(kCudaGraphScopeNames, n);
    if (!scope || *scope == CudaGraphScope::kLayer || *scope == CudaGraphScope::kFullIteration) {
      throw r.error(megatron_flag::kGraphModules, n, "unknown value", "attn, mlp, moe, moe_router, moe_preprocess, mamba");
    }
    scopes.push_back(*scope);
  }
  if (impl == "none" && (whole_iteration || !scopes.empty())) {
    throw r.error(megatron_flag::kGraphModules, scope_names.front(), "given without --cuda-graph-impl",
                  "--cuda-graph-impl local, transformer_engine or full_iteration");
  }
  if (whole_iteration) {
    s.runtime.cuda_graph = {CudaGraphScope::kFullIteration};
  } else if (impl != "none") {
    s.runtime.cuda_graph = scopes.empty() ? std::vector{CudaGraphScope::kLayer} : scopes;
  }
  // Fusions: Megatron's defaults, changed by the flags.
  auto& fusions = s.runtime.fusions;
  const auto set_fusion = [&](Fusion f, bool on) {
    std::erase(fusions, f);
    if (on) fusions.push_back(f);
  };
  set_fusion(Fusion::kCrossEntropy, r.has(megatron_flag::kCrossEntropyFusion));
  set_fusion(Fusion::kMoePermute, r.has(megatron_flag::kPermuteFusion));
  set_fusion(Fusion::kMoeRouter, r.has(megatron_flag::kRouterFusion));
  const bool no_swiglu = r.has(megatron_flag::kNoSwigluFusion), no_gelu = r.has(megatron_flag::kNoGeluFusion);
  if (no_swiglu || no_gelu) set_fusion(Fusion::kBiasSwiglu, false);
  if (r.has(megatron_flag::kNoRopeFusion)) set_fusion(Fusion::kRope, false);
  if (r.has(megatron_flag::kNoGradAccFusion)) set_fusion(Fusion::kGradientAccumulation, false);
  if (r.has(megatron_flag::kNoSoftmaxFusion)) set_fusion(Fusion::kMaskedSoftmax, false);
  std::sort(fusions.begin(), fusions.end());
  // Offloading.
  const bool offload_activations = r.has(megatron_flag::kActivationOffload);
  auto offload_modules = r.names(megatron_flag::kOffloadModules, kOffloadModuleNames);
  if (offload_activations) s.offload.activations = offload_modules;
  if (r.has(megatron_flag::kOptimizerOffload)) s.offload.optimizer_fraction = r.number(megatron_flag::kOptimizerOffloadFraction, 0.0, 1.0).value_or(1.0);
  try {
    validate_layout(s);
  } catch (InputError& e) {
    throw e.in_file(file);
  }
  return {std::move(s), r.unused()};
}

}  // namespace moesim
