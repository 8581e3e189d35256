#include "memory/rank_memory.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "core/error.hpp"
#include "memory/pass_walk.hpp"
#include "model/counts.hpp"
#include "schedule/stage_params.hpp"
#include "schedule/step_shape.hpp"

namespace moesim::memory {
namespace {

constexpr double kAct = 2.0;   // 16-bit activations (bf16/fp16), Korthikanti 2022 §4.1
constexpr double kMask = 1.0;  // dropout mask, one byte per element (Korthikanti 2022 §4.1)
constexpr double kFp32 = 4.0;

double as_d(std::int64_t v) { return static_cast<double>(v); }

/// The recompute modules the formulas ask about, looked up once per call instead of once per term
/// (RecomputeSpec::has searches the module list; the planner evaluates every candidate).
struct Recompute {
  bool full = false, layernorm = false, mla_up_proj = false, core_attn = false, mlp = false, moe = false,
       shared_experts = false, moe_act = false;
};

Recompute recompute_of(const RecomputeSpec& rc) {
  Recompute r;
  r.full = rc.granularity == RecomputeGranularity::kFull;
  if (rc.granularity == RecomputeGranularity::kNone) return r;
  r.layernorm = rc.has(RecomputeModule::kLayernorm);
  r.mla_up_proj = rc.has(RecomputeModule::kMlaUpProj);
  r.core_attn = rc.has(RecomputeModule::kCoreAttn);
  r.mlp = rc.has(RecomputeModule::kMlp);
  r.moe = rc.has(RecomputeModule::kMoe);
  r.shared_experts = rc.has(RecomputeModule::kSharedExperts);
  r.moe_act = rc.has(RecomputeModule::kMoeAct);
  return r;
}

/// Shapes every activation formula needs, in elements.
struct Dims {
  double tokens = 0;  ///< s·b/cp: tokens of one micro-batch on this rank before sequence sharding
  double seq = 0;     ///< full sequence: keys each query attends to in an unfused softmax
  double h = 0;
  double tp = 1;
  double sp = 1;      ///< t with sequence parallelism (norm/dropout regions sharded), else 1
};

Dims dims_of(const Scenario& s) {
  const auto& p = s.parallel;
  Dims d;
  d.tokens = as_d(schedule::rank_tokens(s));
  d.seq = as_d(s.training.seq_length);
  d.h = as_d(s.model.hidden_size);
  d.tp = as_d(p.tp);
  d.sp = p.sequence_parallel ? d.tp : 1.0;
  return d;
}

/// One-byte hidden-dropout masks after the attention projection and after the MLP (Korthikanti's
/// convention, also Megatron's theoretical_memory_usage.py) exist only when the model trains with
/// hidden dropout: dropout with p = 0 returns its input and saves nothing (ModelSpec::hidden_dropout).
bool keeps_dropout_masks(const Scenario& s) { return s.model.hidden_dropout > 0.0; }

/// Bytes per element a low-precision GEMM keeps of its input for the weight gradient: Transformer
/// Engine saves the quantized (columnwise) copy instead of the 16-bit tensor (TE
/// performance_considerations.rst "Memory usage"; Megatron MoE README "FP8 Training: 50% activation
/// reduction — stores linear layer inputs in FP8"). Scales: fp32 per 128 (blockwise), E8M0 per 32
/// (MXFP8), E4M3 per 16 (NVFP4, whose weight-gradient inputs are 4-bit after the Hadamard transform).
double gemm_input_element_bytes(Precision p) { return quantized_activation_bytes(p); }

/// Bytes per element of a norm output read by `consumers` GEMMs: one shared 16-bit tensor, or one
/// quantized copy per low-precision GEMM.
double norm_output_element_bytes(Precision p, double consumers) {
  return is_low_precision(p) ? consumers * gemm_input_element_bytes(p) : kAct;
}

/// Per-token bytes of Q, K, V (per head, TP-sharded) and of the attention output (the projection's
/// input). MLA adds its compressed latents, which the down projections compute on SP-sharded tokens.
struct QkvBytes {
  double per_head = 0;  ///< Q, K, V after the up projections (dropped by mla_up_proj recompute)
  double latents = 0;   ///< MLA q/kv latents and the rotary key
  double out = 0;       ///< core-attention output = output-projection input
};

QkvBytes qkv_bytes(const Scenario& s, const Dims& d) {
  const auto& m = s.model;
  const double heads = as_d(m.num_attention_heads) / d.tp;
  QkvBytes q;
  if (m.multi_latent_attention) {
    const auto& mla = *m.multi_latent_attention;
    const double qk = as_d(mla.qk_head_dim + mla.qk_pos_emb_head_dim);
    q.per_head = kAct * heads * (2.0 * qk + as_d(mla.v_head_dim));
    q.latents = kAct * as_d(mla.q_lora_rank + mla.kv_lora_rank + mla.qk_pos_emb_head_dim) / d.sp;
    q.out = kAct * heads * as_d(mla.v_head_dim);
  } else {
    const double groups = as_d(m.num_query_groups) / d.tp;
    q.per_head = kAct * (heads + 2.0 * groups) * as_d(m.kv_channels);
    q.out = kAct * heads * as_d(m.kv_channels);
  }
  return q;
}

/// Korthikanti 2022 attention block + input norm, per token: norm input 2h, QKV input 2h, Q/K/V,
/// softmax 2as + its dropout mask as + dropout output 2as (unfused only), projection input,
/// projection dropout mask h. Norm/dropout regions and the QKV input divide by sp, the rest by t.
double attention_bytes_per_token(const Scenario& s, const Recompute& rc, const Dims& d) {
  const QkvBytes q = qkv_bytes(s, d);
  double b = kAct * d.h / d.sp;                                      // input norm's input (the layer input)
  // Norm output = QKV GEMM input (MLA: the q and kv down projections, each with its own copy in FP8).
  if (!rc.layernorm) b += norm_output_element_bytes(s.precision, s.model.multi_latent_attention ? 2.0 : 1.0) * d.h / d.sp;
  if (!rc.mla_up_proj) b += q.per_head;
  b += q.latents;
  // The attention kernel keeps its 16-bit output for its backward, which in 16-bit precision is also
  // the output projection's saved input. In low precision the projection keeps a quantized copy
  // instead; recomputing core attention (Megatron's checkpointed attention saves only its inputs) then
  // frees the 16-bit output.
  if (!(rc.core_attn && is_low_precision(s.precision))) b += q.out;
  if (is_low_precision(s.precision)) b += q.out / kAct * gemm_input_element_bytes(s.precision);
  if (keeps_dropout_masks(s)) b += kMask * d.h / d.sp;
  // FlashAttention keeps no s×s tensor; the unfused path keeps softmax output, mask and dropout
  // output (5·a·s bytes per token over t) unless core_attn is recomputed (selective recompute).
  if (s.attention_backend == AttentionBackend::kUnfused && !rc.core_attn) {
    b += 5.0 * as_d(s.model.num_attention_heads) * d.seq / d.tp;
  }
  return b;
}

/// Pre-MLP norm input, its output (the MLP / router input) and the MLP dropout mask, per token.
double mlp_entry_bytes_per_token(const Scenario& s, const Recompute& rc, const Dims& d, bool moe_layer) {
  double b = kAct * d.h / d.sp;
  if (!rc.layernorm) {
    // The norm output feeds fc1 (dense), or the router and the permutation (16-bit) plus the shared
    // experts' fc1 (MoE).
    const bool shared = s.model.moe_shared_expert_intermediate_size > 0;
    const double per_elem = !moe_layer ? norm_output_element_bytes(s.precision, 1.0)
                            : is_low_precision(s.precision) && shared ? kAct + gemm_input_element_bytes(s.precision)
                                                                  : kAct;
    b += per_elem * d.h / d.sp;
  }
  if (keeps_dropout_masks(s)) b += kMask * d.h / d.sp;
  return b;
}

/// fc1 output (2 matrices' worth for SwiGLU) and activation output of an MLP of width f_rank on this rank.
double mlp_inner_bytes_per_token(const Scenario& s, double f_rank, bool drop_act_output) {
  const double gated = s.model.gated_linear_unit ? 2.0 : 1.0;
  // fc1 output stays 16-bit for the activation's backward; the activation output is fc2's input.
  return kAct * gated * f_rank + (drop_act_output ? 0.0 : gemm_input_element_bytes(s.precision) * f_rank);
}

/// Routed token copies this rank's experts process per local token: the stage's tokens·k spread
/// over ep·etp·edp expert ranks, each copy seen by its etp ranks ⇒ k·etp/tp per local token
/// (dense ranks tp·cp·dp = expert ranks etp·ep·edp per stage). Skew raises the most-loaded rank.
double routed_copies_per_token(const Scenario& s, const MemoryOptions& opt) {
  double load = opt.expert_load_factor;
  if (s.moe.capacity_factor) {
    // Padded, every expert holds exactly its capacity; dropping, at most that.
    load = s.moe.pad_to_capacity ? *s.moe.capacity_factor : std::min(load, *s.moe.capacity_factor);
  }
  return as_d(s.model.moe_router_topk) * as_d(s.parallel.etp) / as_d(s.parallel.tp) * load;
}

/// Per routed copy: expert fc1 input (h elements, quantized in FP8), fc1 output, activation output
/// (fc2 input; dropped by moe_act), and
/// the permutation metadata backward needs (fp32 routing prob + int32 row index).
double routed_bytes_per_copy(const Scenario& s, const Recompute& rc, const Dims& d) {
  const double f = as_d(s.model.moe_ffn_hidden_size) / as_d(s.parallel.etp);
  return gemm_input_element_bytes(s.precision) * d.h + mlp_inner_bytes_per_token(s, f, rc.moe_act) + kFp32 + 4.0;
}

LayerActivation full_recompute_layer(const Dims& d) {
  LayerActivation a;
  a.attention_bytes = d.tokens * kAct * d.h / d.sp;  // the checkpointed layer input only
  return a;
}

/// Everything a layer saves for its backward under the recompute settings `rc`, wherever it is kept
/// (the backward of a fully recomputed layer rebuilds its activations as if nothing were recomputed).
LayerActivation saved_on_gpu_or_host(const Scenario& s, const Dims& d, const Recompute& rc, bool moe_layer,
                                     const MemoryOptions& opt);

/// The saved bytes of one layer (per micro-batch) that the scenario's offloaded modules move to the
/// host, split as LayerActivation is. Each module offloads the tensors it saves for its backward
/// (Megatron fine_grained_activation_offloading.md: "offload its input"), as far as recomputation has
/// not already dropped them: attn_norm the layer input; qkv_linear the norm output it reads;
/// core_attn q, k, v (and, in low precision, the kernel's 16-bit output, which the projection does
/// not share); attn_proj the projection's input; mlp_norm the pre-MLP norm input; expert_fc1 the routed
/// copies' fc1 input; moe_act the experts' activation input (their fc1 output).
LayerActivation offloaded_under(const Scenario& s, const Dims& d, const Recompute& rc, bool moe_layer,
                                const MemoryOptions& opt) {
  LayerActivation a;
  const OffloadSpec& off = s.offload;
  if (rc.full || off.activations.empty()) return a;
  const QkvBytes q = qkv_bytes(s, d);
  const bool lp = is_low_precision(s.precision);
  double attn = 0;
  if (off.has(OffloadModule::kAttnNorm)) attn += kAct * d.h / d.sp;
  if (off.has(OffloadModule::kQkvLinear) && !rc.layernorm) {
    attn += norm_output_element_bytes(s.precision, s.model.multi_latent_attention ? 2.0 : 1.0) * d.h / d.sp;
  }
  if (off.has(OffloadModule::kCoreAttn)) {
    if (!rc.mla_up_proj) attn += q.per_head;
    if (lp && !rc.core_attn) attn += q.out;
    if (s.attention_backend == AttentionBackend::kUnfused && !rc.core_attn) {
      attn += 5.0 * as_d(s.model.num_attention_heads) * d.seq / d.tp;
    }
  }
  if (off.has(OffloadModule::kAttnProj)) attn += lp ? q.out / kAct * gemm_input_element_bytes(s.precision) : q.out;
  a.attention_bytes = d.tokens * attn;
  if (off.has(OffloadModule::kMlpNorm)) a.mlp_bytes = d.tokens * kAct * d.h / d.sp;
  if (moe_layer && !rc.moe) {
    const double copies = d.tokens * routed_copies_per_token(s, opt);
    const double f = as_d(s.model.moe_ffn_hidden_size) / as_d(s.parallel.etp);
    const double gated = s.model.gated_linear_unit ? 2.0 : 1.0;
    if (off.has(OffloadModule::kExpertFc1)) a.routed_bytes += copies * gemm_input_element_bytes(s.precision) * d.h;
    if (off.has(OffloadModule::kMoeAct)) a.routed_bytes += copies * kAct * gated * f;
  }
  return a;
}

/// layer_activation under the recompute settings `rc`: what stays on the GPU.
LayerActivation layer_activation_under(const Scenario& s, const Dims& d, const Recompute& rc, bool moe_layer,
                                       const MemoryOptions& opt) {
  LayerActivation a = saved_on_gpu_or_host(s, d, rc, moe_layer, opt);
  const LayerActivation off = offloaded_under(s, d, rc, moe_layer, opt);
  a.attention_bytes -= off.attention_bytes;
  a.mlp_bytes -= off.mlp_bytes;
  a.routed_bytes -= off.routed_bytes;
  return a;
}

LayerActivation saved_on_gpu_or_host(const Scenario& s, const Dims& d, const Recompute& rc, bool moe_layer,
                                     const MemoryOptions& opt) {
  if (rc.full) return full_recompute_layer(d);
  LayerActivation a;
  a.attention_bytes = d.tokens * attention_bytes_per_token(s, rc, d);
  const auto& m = s.model;
  double mlp = mlp_entry_bytes_per_token(s, rc, d, moe_layer);
  if (!moe_layer) {
    if (!rc.mlp) mlp += mlp_inner_bytes_per_token(s, as_d(m.ffn_hidden_size) / d.tp, false);
    a.mlp_bytes = d.tokens * mlp;
    return a;
  }
  if (!rc.moe) {
    mlp += kFp32 * as_d(m.num_moe_experts) / d.sp;  // router logits/probs for the softmax/top-k backward
    if (m.moe_shared_expert_intermediate_size > 0 && !rc.shared_experts) {
      mlp += mlp_inner_bytes_per_token(s, as_d(m.moe_shared_expert_intermediate_size) / d.tp, false);
    }
    a.routed_bytes = d.tokens * routed_copies_per_token(s, opt) * routed_bytes_per_copy(s, rc, d);
  }
  a.mlp_bytes = d.tokens * mlp;
  return a;
}

}  // namespace

LayerActivation layer_activation(const Scenario& s, bool moe_layer, const MemoryOptions& opt) {
  return layer_activation_under(s, dims_of(s), recompute_of(s.recompute), moe_layer, opt);
}

LayerActivation layer_offload(const Scenario& s, bool moe_layer, const MemoryOptions& opt) {
  return offloaded_under(s, dims_of(s), recompute_of(s.recompute), moe_layer, opt);
}

BytesPerParam bytes_per_param(Precision p, bool distributed_optimizer, double shards, bool grads_in_fp32,
                              bool param_remainders) {
  // Megatron docs/user-guide/features/dist_optimizer.md: bf16 param 2 + fp32 main grad 4 + fp32
  // master/m/v 12; fp16 keeps fp16 grads (2) and an fp32 grad copy in the optimizer (16). With
  // grad_reduce_in_fp32 off the main_grad buffer is bf16 (2); the optimizer still keeps fp32 state.
  const bool fp16 = p == Precision::kFp16;
  BytesPerParam b;
  b.weight = 2.0;
  b.grad = fp16 || !grads_in_fp32 ? 2.0 : 4.0;
  // With param remainders the fp32 master is the bf16 weight plus a 16-bit remainder: 2 + m 4 + v 4.
  const double state = fp16 ? 16.0 : param_remainders ? 10.0 : 12.0;
  b.optimizer = state / (distributed_optimizer ? shards : 1.0);
  return b;
}

double low_precision_copy_bytes_per_param(Precision p, std::string_view architecture) {
  // Transformer Engine keeps the 16-bit weight and caches a quantized copy per usage: rowwise for
  // the forward GEMM, columnwise for the dgrad GEMM (TE performance_considerations.rst "Memory usage").
  const bool hopper_or_older = architecture != "blackwell";
  switch (p) {
    case Precision::kBf16:
    case Precision::kFp16:
      return 0.0;
    case Precision::kFp8:  // per-tensor scaling: Hopper needs a physical FP8 transpose, Blackwell one layout
      return hopper_or_older ? 2.0 : 1.0;
    case Precision::kFp8Blockwise:  // 128×128 weight blocks, rowwise + transposed copy, fp32 scale per block
      return 2.0 * (1.0 + kFp32 / (128.0 * 128.0));
    case Precision::kMxfp8:  // 1×32 E8M0 scales run along different axes: both copies on every GPU
      return 2.0 * (1.0 + 1.0 / 32.0);
    case Precision::kNvfp4:  // 4-bit values + one E4M3 scale per 16, rowwise and columnwise
      return 2.0 * (0.5 + 1.0 / 16.0);
  }
  return 0.0;
}

std::int64_t inflight_chunk_passes(std::int64_t rank, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches) {
  // Megatron schedules.py: warm-up forwards, then the first steady forward runs before any backward.
  return std::min(schedule::warmup_passes(rank, pp, vpp, microbatches) + 1, microbatches * vpp);
}

double embedding_activation_bytes(const Scenario& s) {
  // int64 token ids (Megatron's 8·s·b) and the embedding-dropout mask (Megatron's embedding dropout
  // is hidden_dropout).
  const Dims d = dims_of(s);
  return d.tokens * (8.0 + (keeps_dropout_masks(s) ? kMask * d.h / d.sp : 0.0));
}

double mtp_input_bytes(const Scenario& s) {
  const Dims d = dims_of(s);
  return d.tokens * kAct * 2.0 * d.h / d.sp;
}

namespace {

/// MoE dispatch/combine buffers of the layer running: permuted local copies (dispatch send), expert
/// output, combine receive, 16-bit rows of h.
double moe_buffer_bytes(const Scenario& s, const Dims& d, const MemoryOptions& opt) {
  const double k = as_d(s.model.moe_router_topk);
  const double received = d.tokens * routed_copies_per_token(s, opt);
  return kAct * d.h * (2.0 * d.tokens * k / d.sp + received);
}

}  // namespace

double layer_working_bytes(const Scenario& s, bool moe_layer, bool backward, const MemoryOptions& opt) {
  const Dims d = dims_of(s);
  double b = 0;
  // The backward of a fully recomputed layer first rebuilds its activations as if nothing were
  // recomputed; they live until that layer's backward ends.
  if (backward && s.recompute.granularity == RecomputeGranularity::kFull) {
    b += layer_activation_under(s, d, Recompute{}, moe_layer, opt).total();
  }
  if (moe_layer && s.model.is_moe()) b += moe_buffer_bytes(s, d, opt);
  // Offloading keeps one layer's offloaded tensors on the GPU beyond the saved level: in the forward
  // the copy of the layer before is still in flight, in the backward the next layer's are prefetched.
  b += offloaded_under(s, d, recompute_of(s.recompute), moe_layer, opt).total();
  return b;
}

double logits_bytes(const Scenario& s) {
  // Vocab-parallel logits (16-bit) and the fp32 copy the cross-entropy works on, per output head.
  const Dims d = dims_of(s);
  return d.tokens * as_d(s.model.vocab_size) / d.tp * (kAct + kFp32) * as_d(1 + s.model.mtp_num_layers);
}

namespace {

/// Peak of the running sum of saved bytes over Megatron's pass order: each forward adds its chunk's
/// bytes, each backward (chunks reversed) frees them. Called only when the chunks' bytes differ
/// (equal chunks: peak = in-flight passes × chunk bytes). detail::walk_passes skips the repeating
/// periods of the steady state, so this is O(pp·vpp + warm-up), no allocation.
double interleaved_peak_bytes(std::int64_t rank, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches,
                              const double* chunk_bytes) {
  struct Level {
    const double* chunk_bytes;
    double level = 0, steady_level = 0, peak = 0;
    void forward(std::int64_t, const schedule::PipelinePass& p) {
      level += chunk_bytes[p.chunk];
      peak = std::max(peak, level);
    }
    void backward(std::int64_t, const schedule::PipelinePass& p) { level -= chunk_bytes[p.chunk]; }
    void steady() { steady_level = level; }
    void rewind() { level = steady_level; }
    [[nodiscard]] bool done() const { return true; }
  } v{chunk_bytes};
  detail::walk_passes(rank, pp, vpp, microbatches, /*cooldown=*/false, v);  // levels only fall in cool-down
  return v.peak;
}

/// Parameters of one rank of the stage, and how many of them are GEMM weights that Transformer
/// Engine quantizes (not the embedding, LM head, norms or router).
struct StageParams {
  schedule::RankParams params;
  double gemm_weights = 0;
};

double layer_gemm_weights(const Scenario& s, const model::LayerParams& lp) {
  return (lp.attention + lp.dense_mlp + lp.shared_experts) / as_d(s.parallel.tp) + schedule::rank_expert_params(s, lp);
}

/// Layers of a stage come in two kinds only, so each kind's parameters are computed once.
StageParams stage_params(const Scenario& s, const schedule::StageLayers& stage) {
  std::int64_t dense_layer = -1, moe_layer = -1;
  double n_dense = 0, n_moe = 0;
  for (std::int64_t l : stage.layers) {
    if (s.model.layer_is_moe(l)) {
      moe_layer = l;
      n_moe += 1;
    } else {
      dense_layer = l;
      n_dense += 1;
    }
  }
  StageParams out;
  auto add_kind = [&](std::int64_t layer, double count) {
    if (layer < 0) return;
    const model::LayerParams lp = model::layer_params(s.model, layer);
    const schedule::RankParams rp = schedule::layer_rank_params(s, lp);
    out.params.dense += count * rp.dense;
    out.params.expert += count * rp.expert;
    out.gemm_weights += count * layer_gemm_weights(s, lp);
  };
  add_kind(dense_layer, n_dense);
  add_kind(moe_layer, n_moe);
  if (stage.has_embedding) out.params += schedule::embedding_rank_params(s);
  if (stage.has_output_head) {
    out.params += schedule::output_head_rank_params(s);
    const double mtp = as_d(s.model.mtp_num_layers);
    if (mtp > 0) {
      const schedule::RankParams m = schedule::mtp_module_rank_params(s);
      out.params.dense += mtp * m.dense;
      out.params.expert += mtp * m.expert;
      const double h = as_d(s.model.hidden_size);
      out.gemm_weights +=
          mtp * (layer_gemm_weights(s, model::layer_params(s.model, s.model.num_layers - 1)) + 2.0 * h * h);
    }
  }
  return out;
}

void fill_model_state(const Scenario& s, const StageParams& sp, RankMemory& r) {
  const auto& p = s.parallel;
  r.dense_params = sp.params.dense;
  r.expert_params = sp.params.expert;
  // The distributed optimizer shards dense state over the DP group with CP (Megatron's
  // DATA_PARALLEL_GROUP_WITH_CP) and expert state over expert-DP.
  const bool fp32_grads = s.optimizer.grad_reduce_in_fp32;
  const bool remainders = s.optimizer.store_param_remainders;
  const BytesPerParam dense = bytes_per_param(s.precision, s.optimizer.distributed, as_d(p.dp * p.cp), fp32_grads, remainders);
  const BytesPerParam expert =
      bytes_per_param(s.precision, s.optimizer.distributed, as_d(p.edp(s.system.gpus)), fp32_grads, remainders);
  r.weights_bytes = dense.weight * r.dense_params + expert.weight * r.expert_params;
  r.gradients_bytes = dense.grad * r.dense_params + expert.grad * r.expert_params;
  // offload.optimizer_fraction of the state lives (and is stepped) in host memory.
  r.optimizer_bytes = (dense.optimizer * r.dense_params + expert.optimizer * r.expert_params) *
                      (1.0 - s.offload.optimizer_fraction);
  r.low_precision_weight_bytes = sp.gemm_weights * low_precision_copy_bytes_per_param(s.precision, s.system.gpu.architecture);
  // --fp8-param-gather / --fp4-param-gather: the GEMM weights live only in their low-precision form
  // (the copies above).
  if (s.optimizer.fp8_param_gather || s.optimizer.fp4_param_gather) r.weights_bytes -= dense.weight * sp.gemm_weights;
}

/// Chunk buffers live on the stack up to this many virtual chunks (more spill to the heap).
constexpr std::size_t kMaxChunks = 128;

/// Saved bytes per micro-batch of each virtual chunk of the stage (chunk 0 holds the embedding, the
/// last chunk the MTP modules).
void chunk_activation_bytes(const Scenario& s, const schedule::StageLayers& stage, double act_dense, double act_moe,
                            std::span<double> out) {
  const std::size_t vpp = out.size();
  for (std::size_t c = 0; c < vpp; ++c) {
    const std::vector<std::int64_t>& layers = stage.chunks.size() == vpp ? stage.chunks[c] : stage.layers;
    double b = 0;
    for (std::int64_t l : layers) b += s.model.layer_is_moe(l) ? act_moe : act_dense;
    out[c] = b;
  }
  if (stage.has_embedding) out[0] += embedding_activation_bytes(s);
  if (stage.has_output_head && s.model.mtp_num_layers > 0) {
    // Each MTP module: one transformer layer of the last layer's kind + its eh_proj input [2h].
    const double layer = s.model.layer_is_moe(s.model.num_layers - 1) ? act_moe : act_dense;
    out[vpp - 1] += as_d(s.model.mtp_num_layers) * (layer + mtp_input_bytes(s));
  }
}

void fill_activations(const Scenario& s, std::int64_t rank, const schedule::StageLayers& stage,
                      const MemoryOptions& opt, RankMemory& r) {
  const auto& p = s.parallel;
  const Dims d = dims_of(s);
  const Recompute rc = recompute_of(s.recompute);
  const double act_dense = layer_activation_under(s, d, rc, false, opt).total();
  const double act_moe = s.model.is_moe() ? layer_activation_under(s, d, rc, true, opt).total() : 0.0;
  const std::int64_t m = s.num_microbatches();
  const std::int64_t passes = inflight_chunk_passes(rank, p.pp, p.vpp, m);

  std::array<double, kMaxChunks> fixed;  // filled by chunk_activation_bytes
  std::vector<double> spill;  // only for vpp > kMaxChunks
  std::span<double> chunks;
  if (static_cast<std::size_t>(p.vpp) <= kMaxChunks) {
    chunks = std::span<double>(fixed.data(), static_cast<std::size_t>(p.vpp));
  } else {
    spill.assign(static_cast<std::size_t>(p.vpp), 0.0);
    chunks = spill;
  }
  chunk_activation_bytes(s, stage, act_dense, act_moe, chunks);
  double stage_bytes = 0;
  for (double c : chunks) stage_bytes += c;
  const bool equal = std::all_of(chunks.begin(), chunks.end(), [&](double c) { return c == chunks[0]; });
  double peak = 0;
  if (p.vpp == 1) {
    peak = as_d(passes) * stage_bytes;
  } else if (equal) {
    peak = as_d(passes) * chunks[0];
  } else {
    peak = interleaved_peak_bytes(rank, p.pp, p.vpp, m, chunks.data());
  }
  r.activations_bytes = peak;
  r.inflight_microbatches = stage_bytes > 0 ? peak / stage_bytes : as_d(passes) / as_d(p.vpp);

  // One-at-a-time buffers (docs/memory.md): the larger of the layer work (the layer rebuilt by full
  // recompute during its backward, the MoE dispatch/combine buffers of the layer running) and the
  // last stage's logits. Without knowing which layer runs at the peak, the model's MoE kind is
  // taken; the per-op timeline (memory_timeline.hpp) places each buffer at its op.
  const double layer_work = layer_working_bytes(s, s.model.is_moe(), /*backward=*/!stage.layers.empty(), opt);
  const double logits = stage.has_output_head ? logits_bytes(s) : 0.0;
  r.activation_working_bytes = std::max(layer_work, logits);
}

void fill_runtime(const Scenario& s, const MemoryOptions& opt, RankMemory& r) {
  const auto& p = s.parallel;
  // One NCCL communicator per process group of more than one rank that this rank uses. A dense model
  // never runs a collective on the expert groups, and PyTorch/NCCL set up a communicator's buffers at
  // its first use, so only MoE models pay for them.
  const bool moe = s.model.num_moe_experts > 0;
  const std::int64_t sizes[] = {p.tp, p.cp, p.dp * p.cp, p.pp};
  const std::int64_t expert_sizes[] = {p.ep, p.etp, p.edp(s.system.gpus)};
  double groups = 0;
  for (std::int64_t g : sizes) groups += g > 1 ? 1.0 : 0.0;
  for (std::int64_t g : expert_sizes) groups += moe && g > 1 ? 1.0 : 0.0;
  r.comm_buffers_bytes = groups * opt.nccl_bytes_per_group;
  r.cuda_context_bytes = opt.cuda_context_bytes;
  // Only what the caching allocator frees and re-allocates every micro-batch fragments: saved
  // activations and working buffers. Weights, the contiguous gradient buffer and the distributed
  // optimizer's shards are allocated once at start-up.
  r.fragmentation_bytes = opt.fragmentation_share * (r.activations_bytes + r.activation_working_bytes);
}

}  // namespace

RankMemory rank_memory(const Scenario& s, std::int64_t pipeline_stage, const schedule::StageLayers& stage,
                       const MemoryOptions& opt) {
  if (pipeline_stage < 0 || pipeline_stage >= s.parallel.pp) {
    throw InternalError("rank_memory: pipeline_stage must lie in [0, pp)");
  }
  RankMemory r;
  fill_model_state(s, stage_params(s, stage), r);
  fill_activations(s, pipeline_stage, stage, opt, r);
  fill_runtime(s, opt, r);
  return r;
}

}  // namespace moesim::memory
