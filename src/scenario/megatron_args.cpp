#include "scenario/megatron_args.hpp"

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
#include "scenario/megatron_flags.hpp"

namespace moesim {
namespace {



std::string num(double x) { return fmt::format("{}", x); }
std::string num(std::int64_t x) { return std::to_string(x); }

/// moe_layer_freq as Megatron's python list expression, run-length coded: "([0]*3+[1]*58)"; "1" when
/// every layer is MoE.
std::string layer_freq_text(const std::vector<bool>& pattern) {
  if (std::all_of(pattern.begin(), pattern.end(), [](bool b) { return b; })) return "1";
  std::string out = "(";
  for (std::size_t i = 0; i < pattern.size();) {
    std::size_t j = i;
    while (j < pattern.size() && pattern[j] == pattern[i]) ++j;
    if (i > 0) out += "+";
    out += fmt::format("[{}]*{}", pattern[i] ? 1 : 0, j - i);
    i = j;
  }
  return out + ")";
}

std::string_view fp8_recipe_of(const Scenario& s) {
  switch (s.precision) {
    case Precision::kFp8: return s.fp8_recipe == Fp8Recipe::kTensorwise ? "tensorwise" : "delayed";
    case Precision::kFp8Blockwise: return "blockwise";
    case Precision::kMxfp8: return "mxfp8";
    default: return "";
  }
}

}  // namespace

std::vector<std::string> megatron_args(const Scenario& s) {
  std::vector<std::string> a;
  const auto add = [&](std::string_view f, auto... values) {
    a.emplace_back(f);
    (a.push_back(std::string(values)), ...);
  };
  const auto add_if = [&](bool on, std::string_view f) {
    if (on) a.emplace_back(f);
  };
  const auto& m = s.model;
  const auto& p = s.parallel;
  // The model.
  add(megatron_flag::kNumLayers, num(m.num_layers));
  add(megatron_flag::kHiddenSize, num(m.hidden_size));
  if (m.ffn_hidden_size > 0) add(megatron_flag::kFfnHiddenSize, num(m.ffn_hidden_size));
  add(megatron_flag::kHeads, num(m.num_attention_heads));
  if (m.num_query_groups != m.num_attention_heads) add(megatron_flag::kGqa), add(megatron_flag::kQueryGroups, num(m.num_query_groups));
  add(megatron_flag::kKvChannels, num(m.kv_channels));
  add_if(m.gated_linear_unit, megatron_flag::kSwiglu);
  add(megatron_flag::kVocab, num(m.vocab_size));
  add(megatron_flag::kSeqLength, num(s.training.seq_length));
  add(megatron_flag::kMaxPositions, num(s.training.seq_length));
  add_if(!m.share_embeddings_and_output_weights, megatron_flag::kUntie);
  add_if(!m.add_bias_linear, megatron_flag::kNoBias);
  add(megatron_flag::kHiddenDropout, num(m.hidden_dropout));
  if (m.multi_latent_attention) {
    const auto& mla = *m.multi_latent_attention;
    add(megatron_flag::kMla);
    add(megatron_flag::kQLora, num(mla.q_lora_rank));
    add(megatron_flag::kKvLora, num(mla.kv_lora_rank));
    add(megatron_flag::kQkHead, num(mla.qk_head_dim));
    add(megatron_flag::kQkPos, num(mla.qk_pos_emb_head_dim));
    add(megatron_flag::kVHead, num(mla.v_head_dim));
  }
  if (m.mtp_num_layers > 0) add(megatron_flag::kMtp, num(m.mtp_num_layers));
  if (m.is_moe()) {
    add(megatron_flag::kExperts, num(m.num_moe_experts));
    add(megatron_flag::kTopk, num(m.moe_router_topk));
    add(megatron_flag::kMoeFfn, num(m.moe_ffn_hidden_size));
    if (m.moe_shared_expert_intermediate_size > 0) {
      add(megatron_flag::kSharedExpert, num(m.moe_shared_expert_intermediate_size));
    }
    add(megatron_flag::kLayerFreq, layer_freq_text(m.moe_layer_pattern));
  }
  // The layout and the batch.
  add(megatron_flag::kTp, num(p.tp));
  add(megatron_flag::kPp, num(p.pp));
  if (p.vpp > 1) add(megatron_flag::kVpp, num(p.vpp));
  add(megatron_flag::kCp, num(p.cp));
  if (m.is_moe()) add(megatron_flag::kEp, num(p.ep)), add(megatron_flag::kEtp, num(p.etp));
  add_if(p.sequence_parallel, megatron_flag::kSp);
  add_if(p.tp_comm_overlap, megatron_flag::kTpOverlap);
  add_if(p.account_for_embedding_in_pipeline_split, megatron_flag::kEmbeddingSlot);
  add_if(p.account_for_loss_in_pipeline_split, megatron_flag::kLossSlot);
  add(megatron_flag::kMicroBatch, num(s.training.micro_batch_size));
  add(megatron_flag::kGlobalBatch, num(s.training.global_batch_size));
  if (s.attention_backend == AttentionBackend::kUnfused) add(megatron_flag::kAttentionBackend, "unfused");
  // Precision: 16-bit master precision, then Transformer Engine's low-precision recipe.
  add(s.precision == Precision::kFp16 ? megatron_flag::kFp16 : megatron_flag::kBf16);
  if (s.precision == Precision::kNvfp4) {
    add(megatron_flag::kFp4Format, "e2m1");
    add(megatron_flag::kFp4Recipe, "nvfp4");
  } else if (const std::string_view recipe = fp8_recipe_of(s); !recipe.empty()) {
    // Delayed and current (tensorwise) scaling use E4M3 forward and E5M2 gradients; the blockwise and
    // MXFP8 recipes E4M3 throughout.
    add(megatron_flag::kFp8Format, s.precision == Precision::kFp8 ? "hybrid" : "e4m3");
    add(megatron_flag::kFp8Recipe, recipe);
  }
  // Recompute.
  if (s.recompute.granularity == RecomputeGranularity::kFull) {
    add(megatron_flag::kRecomputeGranularity, "full");
    add(megatron_flag::kRecomputeMethod, "uniform");
    add(megatron_flag::kRecomputeLayers, "1");
  } else if (s.recompute.granularity == RecomputeGranularity::kSelective) {
    add(megatron_flag::kRecomputeGranularity, "selective");
    a.emplace_back(megatron_flag::kRecomputeModules);
    for (RecomputeModule mod : s.recompute.modules) a.emplace_back(to_string(mod));
  }
  // MoE.
  if (m.is_moe()) {
    const Dispatcher d = s.moe.dispatcher;
    if (d == Dispatcher::kDeepep || d == Dispatcher::kHybridep) {
      add(megatron_flag::kDispatcher, kMegatronFlexDispatcher);
      add(megatron_flag::kFlexBackend, name_of(kDispatcherNames, d));
      if (s.moe.dispatcher_sms) {
        add(d == Dispatcher::kDeepep ? megatron_flag::kDeepepSms : megatron_flag::kHybridepSms, num(*s.moe.dispatcher_sms));
      }
    } else {
      add(megatron_flag::kDispatcher, name_of(kDispatcherNames, d));
    }
    if (s.moe.capacity_factor) add(megatron_flag::kCapacity, num(*s.moe.capacity_factor));
    add_if(s.moe.pad_to_capacity, megatron_flag::kPad);
    add_if(s.moe.grouped_gemm, megatron_flag::kGroupedGemm);
    add_if(s.moe.a2a_overlap, megatron_flag::kA2aOverlap);
  }
  // Optimizer and gradients.
  const auto& o = s.optimizer;
  add_if(o.distributed, megatron_flag::kDistOpt);
  add_if(o.overlap_grad_reduce, megatron_flag::kOverlapGrad);
  add_if(o.overlap_param_gather, megatron_flag::kOverlapParam);
  add_if(o.fp8_param_gather, megatron_flag::kFp8Gather);
  add_if(o.fp4_param_gather, megatron_flag::kFp4Gather);
  add_if(!o.grad_reduce_in_fp32 && s.precision != Precision::kFp16, megatron_flag::kGradBf16);
  add_if(o.store_param_remainders, megatron_flag::kPrecisionAware);
  // CUDA graphs: the per-layer graphs of Megatron's own implementation, its whole-iteration graph,
  // or Transformer Engine's graphs of the named scopes.
  const auto& graphs = s.runtime.cuda_graph;
  if (graphs == std::vector{CudaGraphScope::kLayer}) {
    add(megatron_flag::kGraphImpl, "local");
  } else if (graphs == std::vector{CudaGraphScope::kFullIteration}) {
    add(megatron_flag::kGraphImpl, "full_iteration");
  } else if (!graphs.empty()) {
    add(megatron_flag::kGraphImpl, "transformer_engine");
    a.emplace_back(megatron_flag::kGraphModules);
    for (CudaGraphScope g : graphs) a.emplace_back(to_string(g));
  }
  // Fusions that differ from Megatron's defaults.
  const auto& r = s.runtime;
  add_if(r.has(Fusion::kCrossEntropy), megatron_flag::kCrossEntropyFusion);
  add_if(m.is_moe() && r.has(Fusion::kMoePermute), megatron_flag::kPermuteFusion);
  add_if(m.is_moe() && r.has(Fusion::kMoeRouter), megatron_flag::kRouterFusion);
  add_if(!r.has(Fusion::kBiasSwiglu), m.gated_linear_unit ? megatron_flag::kNoSwigluFusion : megatron_flag::kNoGeluFusion);
  add_if(!r.has(Fusion::kRope), megatron_flag::kNoRopeFusion);
  add_if(!r.has(Fusion::kGradientAccumulation), megatron_flag::kNoGradAccFusion);
  add_if(!r.has(Fusion::kMaskedSoftmax), megatron_flag::kNoSoftmaxFusion);
  // Offloading.
  if (!s.offload.activations.empty()) {
    add(megatron_flag::kActivationOffload);
    a.emplace_back(megatron_flag::kOffloadModules);
    for (OffloadModule mod : s.offload.activations) a.emplace_back(to_string(mod));
  }
  if (s.offload.optimizer_fraction > 0) {
    add(megatron_flag::kOptimizerOffload);
    add(megatron_flag::kOptimizerOffloadFraction, num(s.offload.optimizer_fraction));
  }
  return a;
}

std::string megatron_command_text(const std::vector<std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool is_flag = args[i].starts_with("--");
    if (is_flag && i > 0) out += " \\\n";
    out += is_flag ? "  " + args[i] : " " + args[i];
  }
  return out + "\n";
}

std::vector<std::string> bridge_overrides(const Scenario& s) {
  std::vector<std::string> o;
  const auto set = [&](std::string_view key, const std::string& value) { o.push_back(fmt::format("{}={}", key, value)); };
  const auto boolean = [](bool b) { return std::string(b ? "true" : "false"); };
  const auto list = [](const auto& items) {
    std::string out = "[";
    for (const auto& x : items) out += (out.size() > 1 ? "," : "") + std::string(to_string(x));
    return out + "]";
  };
  const auto& p = s.parallel;
  const auto& m = s.model;
  set("model.tensor_model_parallel_size", num(p.tp));
  set("model.pipeline_model_parallel_size", num(p.pp));
  set("model.virtual_pipeline_model_parallel_size", p.vpp > 1 ? num(p.vpp) : "null");
  set("model.context_parallel_size", num(p.cp));
  if (m.is_moe()) {
    set("model.expert_model_parallel_size", num(p.ep));
    set("model.expert_tensor_parallel_size", num(p.etp));
  }
  set("model.sequence_parallel", boolean(p.sequence_parallel));
  set("model.tp_comm_overlap", boolean(p.tp_comm_overlap));
  set("model.seq_length", num(s.training.seq_length));
  set("dataset.seq_length", num(s.training.seq_length));
  set("train.micro_batch_size", num(s.training.micro_batch_size));
  set("train.global_batch_size", num(s.training.global_batch_size));
  // Megatron-Bridge's mixed-precision presets (bridge/training/mixed_precision.py).
  std::string_view precision = "bf16_mixed";
  switch (s.precision) {
    case Precision::kBf16: break;
    case Precision::kFp16: precision = "fp16_mixed"; break;
    case Precision::kFp8:
      precision = s.fp8_recipe == Fp8Recipe::kTensorwise ? "bf16_with_fp8_current_scaling_mixed"
                                                          : "bf16_with_fp8_delayed_scaling_mixed";
      break;
    case Precision::kFp8Blockwise: precision = "bf16_with_fp8_subchannel_scaling_mixed"; break;
    case Precision::kMxfp8: precision = "bf16_with_mxfp8_mixed"; break;
    case Precision::kNvfp4: precision = "bf16_with_nvfp4_mixed"; break;
  }
  set("mixed_precision", std::string(precision));
  switch (s.recompute.granularity) {
    case RecomputeGranularity::kNone: set("model.recompute_granularity", "null"); break;
    case RecomputeGranularity::kFull:
      set("model.recompute_granularity", "full");
      set("model.recompute_method", "uniform");
      set("model.recompute_num_layers", "1");
      break;
    case RecomputeGranularity::kSelective:
      set("model.recompute_granularity", "selective");
      set("model.recompute_modules", list(s.recompute.modules));
      break;
  }
  if (m.is_moe()) {
    const Dispatcher d = s.moe.dispatcher;
    const bool flex = d == Dispatcher::kDeepep || d == Dispatcher::kHybridep;
    set("model.moe_token_dispatcher_type", flex ? std::string(kMegatronFlexDispatcher) : std::string(name_of(kDispatcherNames, d)));
    if (flex) set("model.moe_flex_dispatcher_backend", std::string(name_of(kDispatcherNames, d)));
    set("model.moe_expert_capacity_factor", s.moe.capacity_factor ? num(*s.moe.capacity_factor) : "null");
    set("model.moe_pad_expert_input_to_capacity", boolean(s.moe.pad_to_capacity));
    set("model.moe_grouped_gemm", boolean(s.moe.grouped_gemm));
    set("model.overlap_moe_expert_parallel_comm", boolean(s.moe.a2a_overlap));
    set("model.moe_permute_fusion", boolean(s.runtime.has(Fusion::kMoePermute)));
    set("model.moe_router_fusion", boolean(s.runtime.has(Fusion::kMoeRouter)));
  }
  const auto& graphs = s.runtime.cuda_graph;
  if (graphs.empty()) {
    set("model.cuda_graph_impl", "none");
  } else if (graphs == std::vector{CudaGraphScope::kLayer}) {
    set("model.cuda_graph_impl", "local");
  } else if (graphs == std::vector{CudaGraphScope::kFullIteration}) {
    set("model.cuda_graph_impl", "full_iteration");
  } else {
    set("model.cuda_graph_impl", "transformer_engine");
    set("model.cuda_graph_modules", list(graphs));
  }
  const auto& opt = s.optimizer;
  set("ddp.use_distributed_optimizer", boolean(opt.distributed));
  set("optimizer.use_distributed_optimizer", boolean(opt.distributed));
  set("ddp.overlap_grad_reduce", boolean(opt.overlap_grad_reduce));
  set("ddp.overlap_param_gather", boolean(opt.overlap_param_gather));
  set("ddp.grad_reduce_in_fp32", boolean(opt.grad_reduce_in_fp32));
  if (opt.fp8_param_gather) set("ddp.fp8_param_gather", "true");
  return o;
}

}  // namespace moesim
