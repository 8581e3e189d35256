#include "estimate/layer_cost.hpp"

#include <algorithm>

namespace moesim::estimate {

using collective::Op;

PassCost& PassCost::operator+=(const PassCost& o) {
  compute += o.compute;
  tp_comm += o.tp_comm;
  cp_comm += o.cp_comm;
  ep_comm += o.ep_comm;
  return *this;
}

PassCost PassCost::scaled(double k) const { return {compute * k, tp_comm * k, cp_comm * k, ep_comm * k}; }

UnitCost& UnitCost::operator+=(const UnitCost& o) {
  forward += o.forward;
  backward += o.backward;
  recompute += o.recompute;
  return *this;
}

UnitCost UnitCost::scaled(double k) const { return {forward.scaled(k), backward.scaled(k), recompute.scaled(k)}; }

GroupLayout place_groups(const Scenario& s) {
  const auto& p = s.parallel;
  const auto& sys = s.system;
  GroupLayout g;
  // Dense grid: tp fastest, then cp, dp, pp. Expert grid: etp fastest, then ep, edp, pp.
  g.tp = collective::place_group(sys, p.tp, 1);
  g.cp = collective::place_group(sys, p.cp, p.tp);
  g.dp = collective::place_group(sys, p.dp, p.tp * p.cp);
  g.etp = collective::place_group(sys, p.etp, 1);
  g.ep = collective::place_group(sys, p.ep, p.etp);
  g.edp = collective::place_group(sys, p.edp(sys.gpus), p.etp * p.ep);
  g.pp = collective::place_group(sys, std::min<std::int64_t>(p.pp, 2), p.tp * p.cp * p.dp);
  return g;
}

namespace {
// Activations and gradients moved between kernels and over the wire are 16-bit.
constexpr double kActivationBytes = 2.0;
}  // namespace

LayerCostModel::LayerCostModel(const Scenario& s) : s_(s), kernels_(s.system.gpu), groups_(place_groups(s)) {
  tokens_ = s.training.micro_batch_size * s.training.seq_length / s.parallel.cp;
  sp_tokens_ = s.parallel.sequence_parallel ? tokens_ / s.parallel.tp : tokens_;
  full_recompute_ = s.recompute.granularity == RecomputeGranularity::kFull;
}

bool LayerCostModel::recomputes(const char* module) const {
  return full_recompute_ || (s_.recompute.granularity == RecomputeGranularity::kSelective && s_.recompute.has(module));
}

void LayerCostModel::add_gemm(UnitCost& c, Gemm g, bool recomputed) const {
  recomputed = recomputed || (full_recompute_ && in_layer_);
  const Precision p = s_.precision;
  const double fwd = kernels_.gemm({g.m, g.n, g.k, g.batch}, p).value();
  // Backward: data gradient dX = dY·Wᵀ (m×k, inner n) and weight gradient dW = Xᵀ·dY (k×n, inner m).
  const double dgrad = kernels_.gemm({g.m, g.k, g.n, g.batch}, p).value();
  const double wgrad = kernels_.gemm({g.k, g.n, g.m, g.batch}, p).value();
  double cast_fwd = 0, cast_bwd = 0;
  if (gemm_operand_bytes(p) < 2.0) {
    // Low-precision recipes quantise each activation operand (read 16-bit, write the narrow copy
    // and, for the weight gradient, its transpose); TE fuses these casts into neighbouring kernels,
    // so they cost bandwidth but no launch.
    const double in_elems = static_cast<double>(g.m * g.k * g.batch);
    const double out_elems = static_cast<double>(g.m * g.n * g.batch);
    const double per_elem = 2.0 + 2.0 * gemm_operand_bytes(p);
    cast_fwd = kernels_.memory_bound(Bytes(in_elems * per_elem)).value() - kernels_.launch_gap().value();
    cast_bwd = kernels_.memory_bound(Bytes(out_elems * per_elem)).value() - kernels_.launch_gap().value();
  }
  c.forward.compute += fwd + cast_fwd;
  c.backward.compute += dgrad + wgrad + cast_bwd;
  if (recomputed) {
    c.backward.compute += fwd + cast_fwd;
    c.recompute.compute += fwd + cast_fwd;
  }
}

void LayerCostModel::add_memory_op(UnitCost& c, double forward_bytes, double backward_bytes, bool recomputed) const {
  recomputed = recomputed || (full_recompute_ && in_layer_);
  const double fwd = kernels_.memory_bound(Bytes(forward_bytes)).value();
  c.forward.compute += fwd;
  c.backward.compute += kernels_.memory_bound(Bytes(backward_bytes)).value();
  if (recomputed) {
    c.backward.compute += fwd;
    c.recompute.compute += fwd;
  }
}

void LayerCostModel::add_tp_collective(UnitCost& c, Op fwd_op, double bytes, double overlap_window_s,
                                       bool recomputed) const {
  if (s_.parallel.tp <= 1) return;
  recomputed = recomputed || (full_recompute_ && in_layer_);
  const double t = collective::collective_time(s_.system, fwd_op, Bytes(bytes), groups_.tp).value();
  // With TE's userbuffers overlap (tp_comm_overlap) the collective is split into chunks that run
  // under the neighbouring GEMM; only what exceeds the GEMM stays exposed.
  const double exposed = s_.parallel.tp_comm_overlap ? std::max(0.0, t - overlap_window_s) : t;
  c.forward.tp_comm += exposed;
  c.backward.tp_comm += exposed;  // the transposed collective (all-gather ↔ reduce-scatter)
  if (recomputed) {
    c.backward.tp_comm += exposed;
    c.recompute.tp_comm += exposed;
  }
}

void LayerCostModel::add_attention(UnitCost& c, std::int64_t key_span) const {
  const auto& m = s_.model;
  const auto& p = s_.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t heads = m.num_attention_heads / p.tp;
  const bool sp = p.sequence_parallel;
  const double act_bytes_sp = static_cast<double>(sp_tokens_ * h) * kActivationBytes;
  const bool rc_norm = recomputes("layernorm");

  // Pre-attention norm: read x, write normalised x; backward reads x, dy, writes dx.
  add_memory_op(c, 2 * act_bytes_sp, 3 * act_bytes_sp, rc_norm);
  const double gathered_bytes = static_cast<double>(tokens_ * h) * kActivationBytes;

  std::int64_t head_dim_qk = m.kv_channels, head_dim_v = m.kv_channels;
  double qkv_gemm_s = 0;
  if (m.multi_latent_attention) {
    const auto& mla = *m.multi_latent_attention;
    head_dim_qk = mla.qk_head_dim + mla.qk_pos_emb_head_dim;
    head_dim_v = mla.v_head_dim;
    const bool rc_up = recomputes("mla_up_proj");
    if (mla.q_lora_rank > 0) {
      add_gemm(c, {tokens_, mla.q_lora_rank, h, 1}, false);
      add_gemm(c, {tokens_, heads * head_dim_qk, mla.q_lora_rank, 1}, rc_up);
    } else {
      add_gemm(c, {tokens_, heads * head_dim_qk, h, 1}, false);
    }
    add_gemm(c, {tokens_, mla.kv_lora_rank + mla.qk_pos_emb_head_dim, h, 1}, false);
    add_gemm(c, {tokens_, heads * (mla.qk_head_dim + mla.v_head_dim), mla.kv_lora_rank, 1}, rc_up);
    qkv_gemm_s = kernels_.gemm({tokens_, heads * head_dim_qk, h, 1}, s_.precision).value();
  } else {
    const std::int64_t groups = m.num_query_groups / p.tp;
    const std::int64_t qkv_width = (heads + 2 * groups) * m.kv_channels;
    add_gemm(c, {tokens_, qkv_width, h, 1}, false);
    qkv_gemm_s = kernels_.gemm({tokens_, qkv_width, h, 1}, s_.precision).value();
    // Rotary embedding of q and k.
    const double qk_bytes = static_cast<double>(tokens_ * (heads + groups) * m.kv_channels) * kActivationBytes;
    add_memory_op(c, 2 * qk_bytes, 2 * qk_bytes, false);
  }
  if (sp) add_tp_collective(c, Op::kAllGather, gathered_bytes, qkv_gemm_s, rc_norm);

  // Attention core.
  compute::AttentionShape a;
  a.batch_heads = s_.training.micro_batch_size * heads;
  a.query_len = s_.training.seq_length / p.cp;
  a.key_span = key_span;
  a.head_dim_qk = head_dim_qk;
  a.head_dim_v = head_dim_v;
  a.causal = m.causal;
  double core_fwd = 0, core_bwd = 0;
  if (s_.attention_backend == AttentionBackend::kFlash) {
    core_fwd = kernels_.flash_attention_forward(a).value();
    core_bwd = kernels_.flash_attention_backward(a).value();
  } else {
    core_fwd = kernels_.unfused_attention_forward(a, s_.precision).value();
    core_bwd = kernels_.unfused_attention_backward(a, s_.precision).value();
  }
  const bool rc_core = recomputes("core_attn");  // true under full recompute too
  c.forward.compute += core_fwd;
  c.backward.compute += core_bwd + (rc_core ? core_fwd : 0.0);
  if (rc_core) c.recompute.compute += core_fwd;

  if (p.cp > 1) {
    // Ring context parallelism (Megatron cp_comm_type p2p): K and V chunks circulate cp−1 steps,
    // each step overlapped with the attention of the previous chunk; backward also returns dK, dV.
    const std::int64_t kv_heads = m.multi_latent_attention ? heads : m.num_query_groups / p.tp;
    const double chunk_bytes = static_cast<double>(s_.training.micro_batch_size * a.query_len * kv_heads *
                                                   (head_dim_qk + head_dim_v)) *
                               kActivationBytes;
    const double step = collective::collective_time(s_.system, Op::kSendRecv, Bytes(chunk_bytes), groups_.cp).value();
    const double steps = static_cast<double>(p.cp - 1);
    const double fwd_exposed = std::max(0.0, step * steps - core_fwd * steps / static_cast<double>(p.cp));
    const double bwd_exposed = std::max(0.0, 2.0 * step * steps - core_bwd * steps / static_cast<double>(p.cp));
    c.forward.cp_comm += fwd_exposed;
    c.backward.cp_comm += bwd_exposed + (rc_core ? fwd_exposed : 0.0);
    if (rc_core) c.recompute.cp_comm += fwd_exposed;
  }

  // Output projection and its TP reduction.
  const std::int64_t out_in = heads * head_dim_v;
  add_gemm(c, {tokens_, h, out_in, 1}, false);
  const double out_gemm_s = kernels_.gemm({tokens_, h, out_in, 1}, s_.precision).value();
  add_tp_collective(c, sp ? Op::kReduceScatter : Op::kAllReduce, gathered_bytes, out_gemm_s, false);
  // Residual add (+ dropout): read two tensors, write one.
  add_memory_op(c, 3 * act_bytes_sp, 3 * act_bytes_sp, false);
}

void LayerCostModel::add_dense_mlp(UnitCost& c, std::int64_t width, bool recomputed) const {
  const auto& m = s_.model;
  const auto& p = s_.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t local = width / p.tp;
  const std::int64_t fc1_out = (m.gated_linear_unit ? 2 : 1) * local;
  const double gathered_bytes = static_cast<double>(tokens_ * h) * kActivationBytes;
  const double fc1_s = kernels_.gemm({tokens_, fc1_out, h, 1}, s_.precision).value();
  const double fc2_s = kernels_.gemm({tokens_, h, local, 1}, s_.precision).value();
  if (p.sequence_parallel) add_tp_collective(c, Op::kAllGather, gathered_bytes, fc1_s, recomputed);
  add_gemm(c, {tokens_, fc1_out, h, 1}, recomputed);
  // Activation (GELU or SwiGLU): read fc1 output, write the activation; backward reads both + dy.
  const double act_in = static_cast<double>(tokens_ * fc1_out) * kActivationBytes;
  const double act_out = static_cast<double>(tokens_ * local) * kActivationBytes;
  add_memory_op(c, act_in + act_out, 2 * act_in + act_out, recomputed || recomputes("moe_act"));
  add_gemm(c, {tokens_, h, local, 1}, recomputed);
  add_tp_collective(c, p.sequence_parallel ? Op::kReduceScatter : Op::kAllReduce, gathered_bytes, fc2_s, recomputed);
}

void LayerCostModel::add_moe(UnitCost& c) const {
  const auto& m = s_.model;
  const auto& p = s_.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t experts = m.num_moe_experts;
  const std::int64_t topk = m.moe_router_topk;
  const std::int64_t local_experts = experts / p.ep;
  const std::int64_t t = sp_tokens_;  // the MoE block routes the rank's sequence-parallel shard
  const bool rc_moe = recomputes("moe");

  // Router: logits GEMM (h × E), then softmax/sigmoid + top-k over E scores in fp32.
  add_gemm(c, {t, experts, h, 1}, rc_moe);
  add_memory_op(c, static_cast<double>(t * experts) * 4.0 * 3.0, static_cast<double>(t * experts) * 4.0 * 3.0, rc_moe);

  // Permute tokens into expert order (read tokens, write k copies), unpermute on the way back.
  const double copies_bytes = static_cast<double>(t * topk * h) * kActivationBytes;
  const double token_bytes = static_cast<double>(t * h) * kActivationBytes;
  add_memory_op(c, copies_bytes + token_bytes, copies_bytes + token_bytes, rc_moe);  // permute
  add_memory_op(c, copies_bytes + token_bytes, copies_bytes + token_bytes, rc_moe);  // unpermute

  // Dispatch and combine. Balanced routing: each rank receives t·k token copies in total.
  const double imbalance = 1.0;
  if (p.ep > 1) {
    double dispatch_elem = kActivationBytes;
    double bytes_per_rank = static_cast<double>(t * topk * h);
    if (s_.moe.dispatcher == Dispatcher::kDeepep) dispatch_elem = 1.0;  // DeepEP dispatches FP8, combines BF16
    double dispatch = 0, combine = 0;
    if (s_.moe.dispatcher == Dispatcher::kAllgather) {
      // All-gather the routing input over the EP group, compute local experts, reduce-scatter back.
      const double gathered = static_cast<double>(p.ep) * token_bytes;
      dispatch = collective::collective_time(s_.system, Op::kAllGather, Bytes(gathered), groups_.ep).value();
      combine = collective::collective_time(s_.system, Op::kReduceScatter, Bytes(gathered), groups_.ep).value();
    } else {
      dispatch = collective::collective_time(s_.system, Op::kAllToAll,
                                             Bytes(bytes_per_rank * dispatch_elem * imbalance), groups_.ep).value();
      combine = collective::collective_time(s_.system, Op::kAllToAll,
                                            Bytes(bytes_per_rank * kActivationBytes * imbalance), groups_.ep).value();
    }
    c.forward.ep_comm += dispatch + combine;
    c.backward.ep_comm += dispatch + combine;
    if (rc_moe) {
      c.backward.ep_comm += dispatch + combine;
      c.recompute.ep_comm += dispatch + combine;
    }
  }
  if (p.etp > 1) {
    const double etp_bytes = static_cast<double>(p.etp * t * topk * h) * kActivationBytes * imbalance;
    const double ag = collective::collective_time(s_.system, Op::kAllGather, Bytes(etp_bytes), groups_.etp).value();
    const double rs = collective::collective_time(s_.system, Op::kReduceScatter, Bytes(etp_bytes), groups_.etp).value();
    c.forward.tp_comm += ag + rs;
    c.backward.tp_comm += ag + rs;
  }

  // Expert GEMMs: t·k·etp token copies spread over the local experts.
  const std::int64_t width = m.moe_ffn_hidden_size / p.etp;
  const std::int64_t fc1_out = (m.gated_linear_unit ? 2 : 1) * width;
  const double copies_per_expert =
      imbalance * static_cast<double>(t * topk * p.etp) / static_cast<double>(local_experts);
  const std::int64_t m_e = std::max<std::int64_t>(1, static_cast<std::int64_t>(copies_per_expert + 0.5));
  // A grouped GEMM is one launch over all local experts; without it, one GEMM per expert.
  const std::int64_t batch = local_experts;
  add_gemm(c, {m_e, fc1_out, h, batch}, rc_moe);
  const double act_in = static_cast<double>(m_e * batch * fc1_out) * kActivationBytes;
  const double act_out = static_cast<double>(m_e * batch * width) * kActivationBytes;
  add_memory_op(c, act_in + act_out, 2 * act_in + act_out, rc_moe || recomputes("moe_act"));
  add_gemm(c, {m_e, h, width, batch}, rc_moe);
  if (!s_.moe.grouped_gemm && local_experts > 1) {
    const double gaps = 3.0 * static_cast<double>(local_experts - 1) * kernels_.launch_gap().value();
    c.forward.compute += gaps;
    c.backward.compute += 2 * gaps;
  }

  if (m.moe_shared_expert_intermediate_size > 0) add_dense_mlp(c, m.moe_shared_expert_intermediate_size,
                                                               recomputes("shared_experts") || rc_moe);
}

UnitCost LayerCostModel::transformer_layer(bool moe, std::int64_t key_span) const {
  // Full recompute checkpoints whole transformer layers; the embedding and the loss are outside.
  in_layer_ = true;
  UnitCost c;
  add_attention(c, key_span);
  // Pre-MLP norm.
  const double act_bytes_sp = static_cast<double>(sp_tokens_ * s_.model.hidden_size) * kActivationBytes;
  add_memory_op(c, 2 * act_bytes_sp, 3 * act_bytes_sp, recomputes("layernorm"));
  if (moe) {
    add_moe(c);
  } else {
    add_dense_mlp(c, s_.model.ffn_hidden_size, recomputes("mlp"));
  }
  add_memory_op(c, 3 * act_bytes_sp, 3 * act_bytes_sp, false);  // residual add
  in_layer_ = false;
  return c;
}

UnitCost LayerCostModel::embedding() const {
  UnitCost c;
  const double out = static_cast<double>(sp_tokens_ * s_.model.hidden_size) * kActivationBytes;
  // Lookup writes the rows; the backward scatter-adds them into the fp32 gradient.
  add_memory_op(c, 2 * out, 4 * out, false);
  if (s_.parallel.tp > 1) {
    // Vocab-parallel embedding: partial rows are summed over TP (reduce-scatter with SP).
    const double full = static_cast<double>(tokens_ * s_.model.hidden_size) * kActivationBytes;
    add_tp_collective(c, s_.parallel.sequence_parallel ? Op::kReduceScatter : Op::kAllReduce, full, 0.0, false);
  }
  return c;
}

UnitCost LayerCostModel::output_head() const {
  UnitCost c;
  const auto& m = s_.model;
  const std::int64_t vocab_local = m.vocab_size / s_.parallel.tp;
  const double full = static_cast<double>(tokens_ * m.hidden_size) * kActivationBytes;
  const double gemm_s = kernels_.gemm({tokens_, vocab_local, m.hidden_size, 1}, s_.precision).value();
  add_memory_op(c, 2 * static_cast<double>(sp_tokens_ * m.hidden_size) * kActivationBytes,
                3 * static_cast<double>(sp_tokens_ * m.hidden_size) * kActivationBytes, false);  // final norm
  if (s_.parallel.sequence_parallel) add_tp_collective(c, Op::kAllGather, full, gemm_s, false);
  // The LM head runs in 16-bit in every Megatron recipe (TE keeps the output layer out of FP8).
  const Precision keep = s_.precision == Precision::kFp16 ? Precision::kFp16 : Precision::kBf16;
  const double fwd = kernels_.gemm({tokens_, vocab_local, m.hidden_size, 1}, keep).value();
  const double dgrad = kernels_.gemm({tokens_, m.hidden_size, vocab_local, 1}, keep).value();
  const double wgrad = kernels_.gemm({m.hidden_size, vocab_local, tokens_, 1}, keep).value();
  c.forward.compute += fwd;
  c.backward.compute += dgrad + wgrad;
  // Vocab-parallel cross-entropy in fp32: read logits, max/sum passes, write fp32 softmax for the
  // backward; backward reads it and writes 16-bit logit gradients.
  // Megatron's vocab_parallel_cross_entropy (core/tensor_parallel/cross_entropy.py, unfused path)
  // on the [tokens, V/tp] logits: max (read 2 B), cast to fp32 (2 + 4), subtract max (4 + 4), exp
  // (4 + 4), sum (4), divide (4 + 4) = 36 B per logit forward; backward: one-hot subtract (4 + 4),
  // scale by the loss gradient (4 + 4), cast to 16-bit (4 + 2) = 22 B. These passes are not
  // recomputed (the loss sits outside the checkpointed layers).
  const double logits = static_cast<double>(tokens_ * vocab_local);
  const double ce_fwd = kernels_.memory_bound(Bytes(logits * 36.0)).value() + 4 * kernels_.launch_gap().value();
  const double ce_bwd = kernels_.memory_bound(Bytes(logits * 22.0)).value() + 2 * kernels_.launch_gap().value();
  c.forward.compute += ce_fwd;
  c.backward.compute += ce_bwd;
  if (s_.parallel.tp > 1) {
    // Max and sum-exp all-reduces over TP (one fp32 per token each), latency-bound.
    const double small = static_cast<double>(tokens_) * 4.0;
    add_tp_collective(c, Op::kAllReduce, small, 0.0, false);
    add_tp_collective(c, Op::kAllReduce, small, 0.0, false);
  }
  return c;
}

UnitCost LayerCostModel::mtp_projection() const {
  UnitCost c;
  const std::int64_t h = s_.model.hidden_size;
  // eh_proj: concat(norm(h), norm(emb)) [2h] → h, replicated over TP in Megatron's MTP block.
  add_gemm(c, {tokens_, h, 2 * h, 1}, false);
  add_memory_op(c, 4 * static_cast<double>(tokens_ * h) * kActivationBytes,
                6 * static_cast<double>(tokens_ * h) * kActivationBytes, false);
  return c;
}

}  // namespace moesim::estimate
