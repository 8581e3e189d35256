#include "estimate/memory_estimate.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace moesim::estimate {
namespace {

// CUDA context, cuBLAS/cuDNN workspaces and NCCL's internal buffers. A CUDA 12 context on H100
// takes ~0.5 GiB; NCCL allocates its channel buffers per communicator (NCCL_BUFFSIZE 4 MiB × channels
// × peers). Documented in docs/memory.md as fixed terms until calibration measures them.
constexpr double kContextBytes = 0.6 * 1024 * 1024 * 1024;
constexpr double kNcclBytesPerGroup = 0.25 * 1024 * 1024 * 1024;
// PyTorch's caching allocator keeps some freed blocks it cannot reuse for other sizes; Megatron's
// theoretical-memory report ignores this, measured runs show a few percent (docs/memory.md).
constexpr double kFragmentationShare = 0.05;

}  // namespace

double layer_activation_bytes(const Scenario& s, bool moe) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const double tokens = static_cast<double>(s.training.micro_batch_size * s.training.seq_length / p.cp);
  const double tp = static_cast<double>(p.tp);
  const double sp_div = p.sequence_parallel ? tp : 1.0;
  const double h = static_cast<double>(m.hidden_size);
  const double b16 = 2.0;
  if (s.recompute.granularity == RecomputeGranularity::kFull) return tokens * h * b16 / sp_div;  // layer input only

  // Attention block (FlashAttention keeps no s×s tensor): norm input, QKV input, Q/K/V, output.
  double heads = static_cast<double>(m.num_attention_heads) / tp;
  double qkv = 0;
  if (m.multi_latent_attention) {
    const auto& mla = *m.multi_latent_attention;
    // Up-projected per-head Q, K, V plus the compressed latents; recomputing mla_up_proj keeps
    // only the latents (and the rotary key) and rebuilds Q, K, V in the backward pass.
    const double latents = static_cast<double>(mla.q_lora_rank + mla.kv_lora_rank + mla.qk_pos_emb_head_dim);
    qkv = s.recompute.has("mla_up_proj")
              ? latents
              : heads * static_cast<double>(mla.qk_head_dim + mla.qk_pos_emb_head_dim) * 2.0 +
                    heads * static_cast<double>(mla.v_head_dim) + latents;
  } else {
    qkv = (heads + 2.0 * static_cast<double>(m.num_query_groups) / tp) * static_cast<double>(m.kv_channels);
  }
  const double attn_out = heads * static_cast<double>(m.multi_latent_attention ? m.multi_latent_attention->v_head_dim
                                                                               : m.kv_channels);
  double per_token = b16 * (2.0 * h / sp_div + qkv + attn_out);
  if (s.recompute.has("layernorm")) per_token -= b16 * h / sp_div;

  // MLP / MoE block: norm input, fc1 input, fc1 output, activation output.
  const double gated = m.gated_linear_unit ? 2.0 : 1.0;
  per_token += b16 * h / sp_div;  // pre-MLP norm input
  if (moe) {
    const double k = static_cast<double>(m.moe_router_topk);
    const double f = static_cast<double>(m.moe_ffn_hidden_size / p.etp);
    const double act = s.recompute.has("moe_act") ? 0.0 : f;
    // Routed copies land on the rank that owns their expert; balanced routing gives t·k per rank.
    per_token += (k / sp_div) * b16 * (h + gated * f + act);
    per_token += 4.0 * static_cast<double>(m.num_moe_experts) / sp_div;  // router probabilities (fp32)
    if (m.moe_shared_expert_intermediate_size > 0) {
      const double fs = static_cast<double>(m.moe_shared_expert_intermediate_size) / tp;
      per_token += b16 * (h / sp_div + gated * fs + fs);
    }
  } else if (!s.recompute.has("mlp")) {
    const double f = static_cast<double>(m.ffn_hidden_size) / tp;
    per_token += b16 * (h / sp_div + gated * f + f);
  }
  return tokens * per_token;
}

double inflight_microbatches(const Scenario& s, std::int64_t stage) {
  const double m = static_cast<double>(s.num_microbatches());
  const double pp = static_cast<double>(s.parallel.pp);
  const double vpp = static_cast<double>(s.parallel.vpp);
  if (s.parallel.vpp <= 1) return std::min(m, pp - static_cast<double>(stage));
  // Megatron interleaved 1F1B: warm-up of 2·(pp − rank − 1) + (vpp − 1)·pp chunk passes, + 1 in steady state.
  const double chunks = 2.0 * (pp - static_cast<double>(stage) - 1.0) + (vpp - 1.0) * pp + 1.0;
  return std::min(m * vpp, chunks) / vpp;
}

MemoryResult estimate_memory(const Scenario& s, const std::vector<StageLayers>& stages,
                             const std::vector<RankParams>& params, std::vector<std::string>& warnings) {
  MemoryResult out;
  out.capacity_bytes = s.system.gpu.hbm_capacity.value();
  const auto& p = s.parallel;
  const double dp = static_cast<double>(p.dp);
  const double edp = static_cast<double>(p.edp(s.system.gpus));
  const bool fp16 = s.precision == Precision::kFp16;
  const bool low_precision = gemm_operand_bytes(s.precision) < 2.0;
  const bool hopper = s.system.gpu.architecture == "hopper";
  const double act_dense = layer_activation_bytes(s, false);
  const double act_moe = s.model.is_moe() ? layer_activation_bytes(s, true) : 0.0;
  const double tokens = static_cast<double>(s.training.micro_batch_size * s.training.seq_length / p.cp);

  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& st = stages[i];
    const RankParams& rp = params[i];
    StageMemory sm;
    sm.stage = static_cast<std::int64_t>(i);
    // Megatron's bytes per parameter (docs/user-guide/features/dist_optimizer.md): bf16 weight 2,
    // fp32 main grad 4, fp32 master + Adam m, v 12 (sharded over DP / expert-DP with the distributed
    // optimizer); fp16 keeps 2-byte grads and a 4-byte fp32 grad copy in the optimizer.
    sm.weights_bytes = rp.total() * 2.0;
    if (low_precision) sm.weights_bytes += rp.total() * gemm_operand_bytes(s.precision) * (hopper ? 2.0 : 1.0);
    sm.grads_bytes = rp.total() * (fp16 ? 2.0 : 4.0);
    const double opt_per_param = fp16 ? 16.0 : 12.0;
    sm.optimizer_bytes = s.optimizer.distributed ? opt_per_param * (rp.dense / dp + rp.expert / edp)
                                                 : opt_per_param * rp.total();
    double layer_bytes = 0;
    for (std::int64_t layer : st.layers) layer_bytes += s.model.layer_is_moe(layer) ? act_moe : act_dense;
    const double inflight = inflight_microbatches(s, sm.stage);
    sm.activations_bytes = layer_bytes * inflight;
    if (s.recompute.granularity == RecomputeGranularity::kFull && !st.layers.empty()) {
      // During the backward of one layer its full activations are rebuilt.
      Scenario no_rc = s;
      no_rc.recompute.granularity = RecomputeGranularity::kNone;
      sm.activations_bytes += layer_activation_bytes(no_rc, s.model.is_moe());
    }
    if (st.has_output_head) {
      // Logits (16-bit) and fp32 softmax of the vocab-parallel cross-entropy, one micro-batch.
      sm.activations_bytes += tokens * static_cast<double>(s.model.vocab_size / p.tp) * (2.0 + 4.0) *
                              static_cast<double>(1 + s.model.mtp_num_layers);
    }
    const double groups = 2.0 + (p.tp > 1) + (p.cp > 1) + (p.ep > 1) + (p.pp > 1) + (p.etp > 1);
    sm.buffers_bytes = kContextBytes + kNcclBytesPerGroup * groups;
    const double subtotal = sm.weights_bytes + sm.grads_bytes + sm.optimizer_bytes + sm.activations_bytes +
                            sm.buffers_bytes;
    sm.peak_bytes = subtotal * (1.0 + kFragmentationShare);
    out.per_stage.push_back(sm);
    out.peak_bytes = std::max(out.peak_bytes, sm.peak_bytes);
  }
  out.fits = out.peak_bytes <= out.capacity_bytes;
  if (!out.fits) {
    warnings.push_back(fmt::format("predicted peak memory {:.1f} GiB exceeds the {:.1f} GiB of HBM per GPU",
                                   out.peak_bytes / (1024.0 * 1024 * 1024), out.capacity_bytes / (1024.0 * 1024 * 1024)));
  }
  return out;
}

}  // namespace moesim::estimate
