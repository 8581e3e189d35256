#include "config/published_loader.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "config/fitted_constants.hpp"
#include "config/hw_loader.hpp"
#include "config/embedded_json.hpp"
#include "config/json_reader.hpp"
#include "config/recipe_settings.hpp"
#include "config/submission_settings.hpp"
#include "core/error.hpp"
#include "model/model_spec.hpp"

namespace moesim::config {
namespace {

using accuracy::Metric;
using accuracy::PublishedFlops;
using accuracy::PublishedPoint;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}
bool contains(const std::string& hay, const std::string& needle) { return lower(hay).find(needle) != std::string::npos; }

int metric_rank(Metric m) { return static_cast<int>(m); }  // lower is preferred

// The source group of a point and how that publication counted FLOPs, from its id prefix.
struct GroupInfo {
  std::string group;
  PublishedFlops flops;
  bool pre_flash_attention;  ///< measured before FlashAttention existed (2022-05)
  bool megatron_2021_ddp;    ///< Megatron's 2021 "local" DDP: no distributed optimizer, no overlap
};

GroupInfo group_of(const std::string& id) {
  auto starts = [&](const char* p) { return id.rfind(p, 0) == 0; };
  if (starts("narayanan21")) return {"narayanan2021", PublishedFlops::kNarayanan2021, true, true};
  if (starts("korthikanti22")) return {"korthikanti2022", PublishedFlops::kMegatronFullS2, true, true};
  if (starts("mcore08-weak")) return {"mcore-weak-scaling", PublishedFlops::kMegatronFullS2, false, false};
  if (starts("mcore08-strong")) return {"mcore-strong-scaling", PublishedFlops::kMegatronFullS2, false, false};
  if (starts("mcore-moe")) return {"mcore-moe", PublishedFlops::kMegatronFullS2, false, false};
  if (starts("mb-")) return {"megatron-bridge", PublishedFlops::kMegatronCausal, false, false};
  if (starts("nemo")) return {"nemo", PublishedFlops::kMegatronFullS2, false, false};
  if (starts("megascale")) return {"megascale", PublishedFlops::kMegatronFullS2, false, false};
  if (starts("mlperf")) return {"mlperf", PublishedFlops::kMegatronFullS2, false, false};
  return {"other", PublishedFlops::kMegatronCausal, false, false};
}

std::optional<std::string> system_for_gpu(const std::string& gpu) {
  const std::string g = lower(gpu);
  if (g.rfind("a100", 0) == 0) return "dgx-a100";
  if (g.rfind("h100", 0) == 0) return "hgx-h100";
  if (g.rfind("h200", 0) == 0) return "hgx-h200";
  if (g.rfind("h800", 0) == 0) return "hgx-h800";
  if (g == "b200") return "dgx-b200";
  if (g == "b300") return "dgx-b300";
  if (g == "gb200") return "gb200-nvl72";
  if (g == "gb300") return "gb300-nvl72";
  return std::nullopt;
}

std::optional<Precision> precision_of(const Json& v, std::vector<std::string>& assumed) {
  if (v.is_null()) {
    assumed.push_back("precision not published: bf16");
    return Precision::kBf16;
  }
  const std::string p = lower(v.get<std::string>());
  if (p.find("nvfp4") != std::string::npos) return Precision::kNvfp4;
  if (p.find("mxfp8") != std::string::npos || p.find("fp8-mx") != std::string::npos) return Precision::kMxfp8;
  if (p.find("block") != std::string::npos) return Precision::kFp8Blockwise;
  if (p.find("fp8") != std::string::npos) return Precision::kFp8;
  if (p.find("bf16") != std::string::npos) return Precision::kBf16;
  if (p.find("fp16") != std::string::npos) return Precision::kFp16;
  return std::nullopt;
}

std::int64_t int_or(const Json& obj, const char* key, std::int64_t fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  return it->get<std::int64_t>();
}

struct BridgeRow {
  std::vector<int> release;  ///< e.g. {26, 4, 1} for "mb-26-04-01-..."
  std::string task;          ///< "pre-training", "sft", "lora"
};

std::optional<BridgeRow> bridge_row(const std::string& id) {
  if (id.rfind("mb-", 0) != 0) return std::nullopt;
  BridgeRow row;
  std::size_t pos = 3;
  while (pos < id.size() && std::isdigit(static_cast<unsigned char>(id[pos]))) {
    const std::size_t dash = id.find('-', pos);
    if (dash == std::string::npos) return std::nullopt;
    row.release.push_back(std::stoi(id.substr(pos, dash - pos)));
    pos = dash + 1;
  }
  const std::size_t dgx = id.find("-dgx-", pos);
  if (row.release.empty() || dgx == std::string::npos) return std::nullopt;
  row.task = id.substr(pos, dgx - pos);
  return row;
}

/// The task of a run, whatever table it comes from: Megatron-Bridge names it in the row
/// ("mb-<release>-lora-dgx-..."), the NeMo performance summaries in the model column
/// ("nemo2407-llama2_13b-lora-8gpu-...", "...-sft-..."); empty for pre-training. One rule for both, so
/// that no LoRA row runs as full training and rows of different tasks never merge into one run.
std::string run_task(const std::string& id, const std::optional<BridgeRow>& row) {
  if (row) return row->task == "pre-training" ? std::string() : row->task;
  for (const char* task : {"lora", "sft"}) {
    if (id.find(std::string("-") + task + "-") != std::string::npos) return task;
  }
  return {};
}

// The run's own recipe, where tests/validation/megatron-bridge-recipe-settings.json resolved it
// (config/recipe_settings.hpp): its CUDA graphs and fusions (runtime), and a token-drop run's capacity
// factor and padding. Cited per point with the recipe files' commit:path.
void apply_recipe_runtime(Scenario& s, PublishedPoint& pt) {
  const auto settings = bridge_recipe_settings(pt.id);
  if (!settings) {
    pt.assumed.push_back("runtime: no recipe settings for this run; Megatron-Core's defaults (eager, default fusions)");
    return;
  }
  s.runtime.cuda_graph = settings->cuda_graph;
  s.runtime.fusions = settings->fusions;
  std::string graphs;
  for (const CudaGraphScope scope : s.runtime.cuda_graph) graphs += (graphs.empty() ? "" : "+") + std::string(to_string(scope));
  std::string fusions;
  for (const Fusion f : s.runtime.fusions) fusions += (fusions.empty() ? "" : ",") + std::string(to_string(f));
  std::string mismatch;
  for (const auto& field : settings->layout_mismatch) mismatch += (mismatch.empty() ? "" : ", ") + field;
  std::string text = "runtime from the " + settings->release + " recipe (" + settings->resolution +
                     (mismatch.empty() ? std::string() : "; the release's recipe config differs in " + mismatch + ": settings from the closest config, see the file's notes") +
                     "): cuda_graph " + (graphs.empty() ? std::string("none") : graphs) + ", fusions " +
                     (fusions.empty() ? std::string("none") : fusions);
  if (s.model.is_moe() && settings->capacity_factor) {
    s.moe.capacity_factor = settings->capacity_factor;
    s.moe.pad_to_capacity = settings->pad_to_capacity;
    text += fmt::format(", capacity factor {}{}", *settings->capacity_factor, settings->pad_to_capacity ? " padded" : "");
  }
  pt.assumed.push_back(text + " [" + settings->sources + "]");
}

// What every Megatron-Bridge performance recipe sets that its table does not print (docs/accuracy.md
// "Megatron-Bridge recipe settings"; the recipes of each release, v0.2.0 to v0.6.0):
// - bf16 gradients: scripts/performance/configs/<family>/*_llm_pretrain.py and *_finetune.py set
//   mixed_precision.grad_reduce_in_fp32 = ddp.grad_reduce_in_fp32 = False (from v0.6.0 in
//   src/megatron/bridge/perf_recipes/_common.py _benchmark_common);
// - low-precision parameters: utils/precision.py get_precision_config picks
//   training/mixed_precision.py bf16_with_fp8_current_scaling_mixed / bf16_with_mxfp8_mixed, both
//   fp8_param_gather = True, and bf16_with_nvfp4_mixed, fp4_param_gather = True (from v0.4.0); the
//   per-tensor FP8 runs are current-scaling ones (fp8_recipe "tensorwise", the recipe names "fp8_cs"
//   in tests/validation/megatron-bridge-recipe-settings.json);
// - NVFP4 runs without TP communication overlap: configs/llama/llama3_llm_pretrain.py and
//   llama31_llm_pretrain.py, "tp_comm_overlap = False if precision == 'nvfp4'" (v0.4.0 on);
// - Qwen3 MoE runs the flex dispatcher with the HybridEP backend: configs/qwen/qwen3_llm_pretrain.py
//   moe_token_dispatcher_type = "flex", moe_flex_dispatcher_backend from
//   qwen3_workload_base_configs.py ("hybridep" for every GPU, v0.4.0 on), on 32 SMs
//   (utils/overrides.py moe_hybridep_num_sms = 32; v0.6.0 perf_recipes/_common.py);
// - Qwen3 MoE on GB300, GB200 and B300 from 26.06 overlaps the EP all-to-all (combined 1F1B):
//   v0.5.0 qwen3_workload_base_configs.py moe_a2a_overlap = True for those three (not H100, B200),
//   v0.6.0 perf_recipes/qwen/common.py _enable_hybridep_full_iteration_mxfp8
//   overlap_moe_expert_parallel_comm = True.
void apply_bridge_recipe_settings(Scenario& s, PublishedPoint& pt) {
  std::vector<std::string> set = {"grad_reduce_in_fp32 false"};
  s.optimizer.grad_reduce_in_fp32 = false;
  const Precision p = s.precision;
  s.optimizer.fp8_param_gather = p == Precision::kFp8 || p == Precision::kFp8Blockwise || p == Precision::kMxfp8;
  s.optimizer.fp4_param_gather = p == Precision::kNvfp4;
  if (s.optimizer.fp8_param_gather) set.emplace_back("fp8_param_gather true");
  if (p == Precision::kFp8) {
    s.fp8_recipe = Fp8Recipe::kTensorwise;  // bf16_with_fp8_current_scaling_mixed: fp8_recipe = "tensorwise"
    set.emplace_back("fp8_recipe tensorwise");
  }
  if (s.optimizer.fp4_param_gather) {
    set.emplace_back("fp4_param_gather true");
    if (s.parallel.tp > 1) set.emplace_back("tp_comm_overlap false");
    s.parallel.tp_comm_overlap = false;
  }
  const auto row = bridge_row(pt.id);
  if (s.model.is_moe() && contains(s.model.name, "qwen3") && row && row->release >= std::vector<int>{26, 4}) {
    s.moe.dispatcher = Dispatcher::kHybridep;
    s.moe.dispatcher_sms = 32;  // scripts/performance/utils/overrides.py: moe_hybridep_num_sms = 32
    // Megatron-Core's HybridEP moves the bf16 hidden states (fused_a2a.py asserts not fp8_dispatch):
    // moe.fp8_dispatch stays false.
    set.emplace_back("dispatcher flex/hybridep on 32 SMs, bf16 dispatch");
    const bool overlap_gpu = pt.id.find("-dgx-gb300-") != std::string::npos ||
                             pt.id.find("-dgx-gb200-") != std::string::npos ||
                             pt.id.find("-dgx-b300-") != std::string::npos;
    if (overlap_gpu && row->release >= std::vector<int>{26, 6}) {
      s.moe.a2a_overlap = true;
      set.emplace_back("a2a_overlap true");
    }
  }
  std::string text = "Megatron-Bridge perf recipe:";
  for (std::size_t i = 0; i < set.size(); ++i) text += (i ? ", " : " ") + set[i];
  pt.assumed.push_back(text);
  apply_recipe_runtime(s, pt);
}

// The optimizer and recompute settings of a submission's configuration files (the layout ones are read
// where the record is); the distributed optimizer and both overlaps it states are moesim's defaults.
void apply_submission_settings(const SubmissionSettings& submitted, Scenario& s, PublishedPoint& pt) {
  if (submitted.source.empty()) return;
  std::string set;
  const auto note = [&](const std::string& what) { set += (set.empty() ? "" : ", ") + what; };
  if (!submitted.grad_reduce_in_fp32) {
    s.optimizer.grad_reduce_in_fp32 = false;
    note("grad_reduce_in_fp32 false");
  }
  if (submitted.store_param_remainders) {
    s.optimizer.store_param_remainders = true;
    note("store_param_remainders true");
  }
  if (submitted.fp8_param_gather && is_low_precision(s.precision)) {
    s.optimizer.fp8_param_gather = true;
    note("fp8_param_gather true");
  }
  if (submitted.recompute && s.recompute.granularity == RecomputeGranularity::kNone) {
    s.recompute.granularity = *submitted.recompute;
    if (*submitted.recompute == RecomputeGranularity::kSelective) s.recompute.modules = {RecomputeModule::kCoreAttn};
    note(std::string("recompute ") + std::string(name_of(kRecomputeGranularityNames, *submitted.recompute)));
  }
  if (!set.empty()) pt.assumed.push_back(set + " (" + submitted.source + ")");
}

// Builds the point's scenario; returns a skip reason when the publication lacks what a run needs.
std::string build_scenario(const Json& rec, const GroupInfo& gi, PublishedPoint& pt) {
  Scenario& s = pt.scenario;
  const Json& m = rec.at("model");
  if (m.is_null() || m.value("layers", Json()).is_null() || m.value("hidden", Json()).is_null() ||
      m.value("heads", Json()).is_null() || m.value("vocab", Json()).is_null()) {
    return "architecture not published in the file (layers, hidden, heads or vocab missing)";
  }
  const auto sys_name = system_for_gpu(rec.at("gpu").get<std::string>());
  if (!sys_name) return "no system preset for GPU '" + rec.at("gpu").get<std::string>() + "'";
  const Json& par = rec.at("parallel");
  if (par.value("fsdp", Json()).is_boolean() && par.at("fsdp").get<bool>()) return "Megatron-FSDP runs are not modelled";
  if (par.value("tp", Json()).is_null() && par.value("pp", Json()).is_null()) return "parallel layout not published";

  const std::string name = m.at("name").get<std::string>();
  model::ModelSpec& ms = s.model;
  ms.name = name;
  ms.source = rec.at("source").get<std::string>();
  ms.num_layers = m.at("layers").get<std::int64_t>();
  ms.hidden_size = m.at("hidden").get<std::int64_t>();
  ms.num_attention_heads = m.at("heads").get<std::int64_t>();
  ms.num_query_groups = int_or(m, "kv_heads", ms.num_attention_heads);
  ms.kv_channels = int_or(m, "head_dim", ms.hidden_size / ms.num_attention_heads);
  ms.vocab_size = m.at("vocab").get<std::int64_t>();
  // GPT-family models of these papers use a GELU MLP of 4h; Llama/Mixtral/Qwen-family use SwiGLU.
  const bool gpt_style = contains(name, "gpt") || contains(name, "nemotron");
  ms.gated_linear_unit = !gpt_style;
  ms.add_bias_linear = contains(name, "gpt");
  ms.hidden_dropout = published_hidden_dropout(name);
  if (m.value("ffn", Json()).is_null() && m.value("expert_ffn", Json()).is_null()) {
    if (!gpt_style) return "FFN width not published";
    ms.ffn_hidden_size = 4 * ms.hidden_size;
    pt.assumed.push_back("ffn_hidden_size not published: 4·hidden (GPT convention)");
  } else {
    ms.ffn_hidden_size = int_or(m, "ffn", 0);
  }
  const std::int64_t experts = int_or(m, "num_experts", 0);
  if (experts > 0) {
    ms.num_moe_experts = experts;
    ms.moe_router_topk = int_or(m, "topk", 0);
    ms.moe_ffn_hidden_size = int_or(m, "expert_ffn", 0);
    ms.moe_shared_expert_intermediate_size = int_or(m, "shared_experts", 0) * ms.moe_ffn_hidden_size;
    const std::int64_t dense = int_or(m, "dense_layers", 0);
    ms.moe_layer_pattern.assign(static_cast<std::size_t>(ms.num_layers), true);
    for (std::int64_t i = 0; i < dense && i < ms.num_layers; ++i) ms.moe_layer_pattern[static_cast<std::size_t>(i)] = false;
    if (ms.ffn_hidden_size == 0 && dense > 0) return "dense-layer FFN width not published";
  }
  // Megatron's GPT of 2021-22 tied the LM head to the embedding; later benchmarks do not.
  ms.share_embeddings_and_output_weights = gi.pre_flash_attention;
  try {
    model::validate(ms);
  } catch (const InputError& e) {
    return std::string("model: ") + e.what();
  }

  const std::int64_t gpus = rec.at("num_gpus").get<std::int64_t>();
  try {
    s.system = load_system_preset(*sys_name, gpus);
  } catch (const InputError& e) {
    return e.what();
  }
  // The run's host is its system's (runtime.host's default), priced with the fitted constants.
  s.runtime.host = RuntimeHost{s.system.host, std::nullopt};
  s.host_costs = fitted_host_costs();
  auto& p = s.parallel;
  p.tp = int_or(par, "tp", 1);
  p.pp = int_or(par, "pp", 1);
  const SubmissionSettings submitted = submission_settings(pt.id);
  p.vpp = int_or(par, "vpp", submitted.vpp.value_or(1));
  p.cp = int_or(par, "cp", 1);
  p.ep = int_or(par, "ep", 1);
  p.etp = int_or(par, "etp", 1);
  if (experts > 0 && par.value("etp", Json()).is_null()) pt.assumed.push_back("etp not published: 1 (NVIDIA MoE recipes)");
  if (par.value("vpp", Json()).is_null() && p.pp > 1) {
    pt.assumed.push_back(submitted.source.empty() ? std::string("vpp not published: 1")
                                                  : "vpp not published: " + std::to_string(p.vpp) + " (" + submitted.source + ")");
  }
  // A published layout whose pp·vpp does not divide the layers but divides layers + 2 can only have
  // run with Megatron's embedding and loss counted as pipeline layers (Megatron asserts the split).
  const std::int64_t model_chunks = p.pp * p.vpp;
  if (model_chunks > 1 && s.model.num_layers % model_chunks != 0 && (s.model.num_layers + 2) % model_chunks == 0) {
    p.account_for_embedding_in_pipeline_split = true;
    p.account_for_loss_in_pipeline_split = true;
    pt.assumed.push_back("embedding and loss counted as pipeline layers (the only way Megatron splits " +
                         std::to_string(s.model.num_layers) + " layers over pp·vpp = " + std::to_string(model_chunks) +
                         ")");
  }
  if (p.tp * p.cp * p.pp <= 0 || gpus % (p.tp * p.cp * p.pp) != 0) return "num_gpus not divisible by tp·cp·pp";
  p.dp = gpus / (p.tp * p.cp * p.pp);
  const std::int64_t dp_pub = int_or(par, "dp", p.dp);
  if (dp_pub != p.dp) return "published dp " + std::to_string(dp_pub) + " disagrees with num_gpus / (tp·cp·pp) = " + std::to_string(p.dp);
  // Korthikanti 2022's baseline runs and Narayanan 2021 predate sequence parallelism.
  const std::string recompute = rec.value("recompute", Json()).is_null() ? "" : lower(rec.at("recompute").get<std::string>());
  p.sequence_parallel = p.tp > 1 && !gi.megatron_2021_ddp;
  if (recompute.find("sequence parallel") != std::string::npos) p.sequence_parallel = p.tp > 1;
  if (recompute.find("without sequence parallel") != std::string::npos) p.sequence_parallel = false;
  // Megatron-Core benchmarks state --tp-comm-overlap; Megatron-Bridge recipes enable it too.
  p.tp_comm_overlap = !gi.megatron_2021_ddp && p.tp > 1;

  s.training.seq_length = rec.at("seq_len").get<std::int64_t>();
  s.training.global_batch_size = int_or(rec, "global_batch", 0);
  if (s.training.global_batch_size <= 0) return "global batch not published";
  s.training.micro_batch_size = int_or(rec, "micro_batch", submitted.micro_batch.value_or(1));
  if (rec.value("micro_batch", Json()).is_null()) {
    pt.assumed.push_back("micro_batch not published: " + std::to_string(s.training.micro_batch_size) +
                         (submitted.source.empty() ? "" : " (" + submitted.source + ")"));
  }

  const auto prec = precision_of(rec.at("precision"), pt.assumed);
  if (!prec) return "unrecognised precision '" + dump_text(rec.at("precision")) + "'";
  s.precision = *prec;
  if (recompute.find("full") != std::string::npos && recompute.find("where needed") == std::string::npos) {
    s.recompute.granularity = RecomputeGranularity::kFull;
  } else if (recompute.find("selective") != std::string::npos) {
    s.recompute.granularity = RecomputeGranularity::kSelective;
    s.recompute.modules = {RecomputeModule::kCoreAttn};
  }
  s.attention_backend = gi.pre_flash_attention ? AttentionBackend::kUnfused : AttentionBackend::kFlash;
  if (gi.megatron_2021_ddp) {
    s.optimizer.distributed = false;
    s.optimizer.overlap_grad_reduce = false;
    s.optimizer.overlap_param_gather = false;
  }
  s.moe.routing.distribution = RoutingDistribution::kBalanced;  // Megatron-Bridge force-balances MoE runs
  if (gi.group == "megatron-bridge") apply_bridge_recipe_settings(s, pt);
  apply_submission_settings(submitted, s, pt);
  if (s.precision == Precision::kFp8 && gi.group != "megatron-bridge") {
    // NeMo 1.x builds TE's DelayedScaling from the launcher configs' fp8_amax_history_len and
    // fp8_amax_compute_algo (conf/training/*/*.yaml of the NeMo tables' releases), as MLPerf's NeMo-based
    // GPT-3 does: Megatron-Core's default recipe, which the scenario keeps.
    pt.assumed.push_back("fp8_recipe delayed (NeMo 1.x: TE DelayedScaling, fp8_amax_history_len and "
                         "fp8_amax_compute_algo in the launcher configs)");
  }
  s.name = pt.id;
  try {
    validate_layout(s);
  } catch (const InputError& e) {
    return std::string("layout: ") + e.what();
  }
  return {};
}

// ---- Megatron-Bridge release tables --------------------------------------------------------------
//
// Megatron-Bridge republishes its performance table with every container release, and the same model
// on the same GPU moves by up to 2x between releases at an identical layout (Qwen3-30B-A3B on GB200:
// 26,112 tokens/s/GPU in 26.04.01, 39,936 in 26.08) because the software under it changed (fused
// MoE kernels, CUDA graphs, recipe tuning), not the hardware. One static model cannot match every
// release, so the rule is: for each (task, model, GPU) the newest release that lists it is the
// reference, and the rows of older releases are reported as superseded (-v prints them; nothing is
// removed from the file). The rule uses release numbers only, never the error of a point.

std::string release_name(const std::vector<int>& release) {
  std::string out;
  for (int part : release) out += (out.empty() ? "" : ".") + std::string(part < 10 ? "0" : "") + std::to_string(part);
  return out;
}

/// Marks the Megatron-Bridge rows that a newer release of the same (task, model, GPU) supersedes.
void mark_superseded_releases(std::vector<PublishedPoint>& points, const std::vector<std::string>& row_keys) {
  std::map<std::string, std::vector<int>> newest;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto row = bridge_row(points[i].id);
    if (!row) continue;
    auto& best = newest[row_keys[i]];
    best = std::max(best, row->release);
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto row = bridge_row(points[i].id);
    if (!row || !points[i].skip_reason.empty()) continue;
    const auto& best = newest[row_keys[i]];
    if (row->release == best) continue;
    points[i].skip_reason = "superseded: Megatron-Bridge " + release_name(best) + " republishes " + row->task + " of " +
                            points[i].subgroup + "; only the newest release of a (task, model, GPU) is validated";
  }
}

std::string run_key(const Json& rec, const std::string& group) {
  return group + "|" + dump_text(rec.at("gpu")) + "|" + dump_text(rec.at("num_gpus")) + "|" + dump_text(rec.at("model")) + "|" +
         dump_text(rec.at("parallel")) + "|" + dump_text(rec.at("micro_batch")) + "|" + dump_text(rec.at("global_batch")) + "|" +
         dump_text(rec.at("seq_len")) + "|" + dump_text(rec.at("precision")) + "|" + dump_text(rec.at("recompute"));
}

}  // namespace

namespace {
// The built-in copy when `path` is empty, else the file.
Json published_document(const std::string& path) {
  if (!path.empty()) return load_json_file(path);
  return parse_json_text(builtin_file_text(kBuiltinPublishedFile), kBuiltinPublishedFile);
}
}  // namespace

std::string published_fingerprint(const std::string& path) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis and prime (Fowler, Noll, Vo)
  for (const char c : published_document(path).dump()) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

std::vector<PublishedPoint> load_published_points(const std::string& given_path) {
  const Json doc = published_document(given_path);
  const std::string path = given_path.empty() ? std::string(kBuiltinPublishedFile) : given_path;
  if (!doc.is_array()) throw InputError("", describe_value(doc), "expected an array of measurements").in_file(path);
  std::vector<PublishedPoint> points;
  std::vector<std::string> row_keys;  ///< (task, model, GPU) of each point, for the release rule
  std::map<std::string, std::size_t> by_run;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const Json& rec = doc[i];
    const std::string at = "/" + std::to_string(i);
    try {
      if (!rec.is_object() || !rec.contains("id") || !rec.contains("metric") || !rec.contains("value")) {
        throw InputError(at, describe_value(rec), "each measurement needs id, metric and value");
      }
      const auto metric = value_of(accuracy::kMetricNames, rec.at("metric").get<std::string>());
      if (!metric) continue;  // microbenchmarks
      PublishedPoint pt;
      pt.id = rec.at("id").get<std::string>();
      const GroupInfo gi = group_of(pt.id);
      pt.group = gi.group;
      pt.flops = gi.flops;
      pt.source = rec.value("source", "");
      pt.metric = *metric;
      pt.value = rec.at("value").get<double>();
      pt.skip_reason = build_scenario(rec, gi, pt);
      pt.subgroup = lower(rec.at("model").is_null() ? "unknown" : rec.at("model").value("name", "unknown")) + "/" +
                    lower(rec.at("gpu").get<std::string>());
      const auto row = bridge_row(pt.id);
      const std::string task = run_task(pt.id, row);
      if (task == "lora" && pt.skip_reason.empty()) {
        pt.skip_reason = "LoRA fine-tuning is not modelled (frozen base weights: no weight-gradient GEMMs, optimizer "
                         "step or gradient traffic for them)";
      }
      const std::string row_key = (row ? row->task : std::string()) + "|" + pt.subgroup;
      const std::string key = task + "|" + run_key(rec, gi.group);
      auto it = by_run.find(key);
      if (it == by_run.end()) {
        by_run.emplace(key, points.size());
        points.push_back(std::move(pt));
        row_keys.push_back(row_key);
      } else if (metric_rank(pt.metric) < metric_rank(points[it->second].metric)) {
        points[it->second] = std::move(pt);
      }
    } catch (const Json::exception& e) {
      throw InputError(at, "", std::string("malformed measurement: ") + e.what()).in_file(path);
    } catch (InputError& e) {
      throw e.in_file(path);
    }
  }
  mark_superseded_releases(points, row_keys);
  return points;
}

}  // namespace moesim::config
