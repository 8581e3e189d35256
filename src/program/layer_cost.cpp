#include "program/layer_cost.hpp"

#include "moe/dispatch_traffic.hpp"

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>

#include "compute/grouped_gemm.hpp"
#include "memory/rank_memory.hpp"
#include "program/host_ops.hpp"
#include "program/kernel_speedup.hpp"

namespace moesim::program {

using collective::Op;

PassCost& PassCost::operator+=(const PassCost& o) {
  compute += o.compute;
  tp_comm += o.tp_comm;
  cp_comm += o.cp_comm;
  ep_comm += o.ep_comm;
  offload_comm += o.offload_comm;
  host_idle += o.host_idle;
  return *this;
}

PassCost PassCost::scaled(double k) const {
  return {compute * k, tp_comm * k, cp_comm * k, ep_comm * k, offload_comm * k, host_idle * k};
}

UnitCost& UnitCost::operator+=(const UnitCost& o) {
  forward += o.forward;
  backward += o.backward;
  recompute += o.recompute;
  return *this;
}

UnitCost UnitCost::scaled(double k) const { return {forward.scaled(k), backward.scaled(k), recompute.scaled(k)}; }

namespace {
// Activations and gradients moved between kernels and over the wire are 16-bit.
constexpr double kActivationBytes = 2.0;

// HBM bytes per element of a 16-bit activation operand that a low-precision recipe quantises.
double quantisation_bytes_per_element(Precision p) {
  const double narrow = gemm_operand_bytes(p);
  if (p == Precision::kNvfp4) {
    // TE's NVFP4 recipe (NVIDIA, "Pretraining Large Language Models with NVFP4", arXiv 2509.25149,
    // §4; TE NVFP4BlockScaling): two-level scaling needs the tensor's amax before the cast (read
    // 16-bit), then a row-wise 1×16 quantisation (read 16-bit, write FP4 + one E4M3 scale per 16).
    // The weight-gradient copy goes through a 16×16 random Hadamard transform, which changes the
    // values, so it gets its own amax pass and its own column-wise quantisation instead of being a
    // transpose of the row-wise copy.
    const double quantise = 2.0 + narrow + 1.0 / 16.0;
    return 2.0 + quantise + 2.0 + quantise;
  }
  // FP8 recipes: read the 16-bit tensor once, write the row-wise and the column-wise copy.
  return 2.0 + 2.0 * narrow;
}

double gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
}

void add_to(PassCost& c, const LayerOp& op) {
  switch (op.kind) {
    case OpKind::kCompute: c.compute += op.seconds; break;
    case OpKind::kTpComm: c.tp_comm += op.seconds; break;
    case OpKind::kCpComm: c.cp_comm += op.seconds; break;
    case OpKind::kEpComm: c.ep_comm += op.seconds; break;
    case OpKind::kOffloadComm: c.offload_comm += op.seconds; break;
    case OpKind::kHostIdle: c.host_idle += op.seconds; break;
  }
}

LayerOp with_phase(LayerOp op, OpPhase phase) {
  op.phase = phase;
  return op;
}
}  // namespace

std::string_view to_string(OpKind k) { return to_string(category_of(k)); }
std::string_view to_string(OpPhase p) { return name_of(kOpPhaseNames, p); }

UnitCost OpProgram::cost() const {
  UnitCost c;
  for (const LayerOp& op : forward) add_to(c.forward, op);
  for (const LayerOp& op : backward) {
    add_to(c.backward, op);
    if (op.phase == OpPhase::kRecompute) add_to(c.recompute, op);
  }
  return c;
}

OpProgram LayerCostModel::Builder::finish() {
  OpProgram p;
  p.forward = std::move(forward);
  p.backward = std::move(recompute);
  p.backward.insert(p.backward.end(), backward_in_forward_order.rbegin(), backward_in_forward_order.rend());
  return p;
}

LayerCostModel::LayerCostModel(const Scenario& s, const schedule::StepShape& shape, compute::KernelQueryLog* log)
    : s_(s),
      kernels_(s.system.gpu, s.calibration,
               s.moe.grouped_gemm ? hw::GroupedImplementation::kGroupedBatched : hw::GroupedImplementation::kLoop),
      comms_(s.system, s.calibration),
      shape_(shape) {
  full_recompute_ = s.recompute.granularity == RecomputeGranularity::kFull;
  kernels_.log_queries(log);
}

OpProgram LayerCostModel::finished(Builder& c) const {
  OpProgram p = c.finish();
  apply_kernel_speedup(p, s_.whatif);
  return p;
}

OpProgram LayerCostModel::priced(OpProgram p) const {
  price_host(p, s_);
  return p;
}

bool LayerCostModel::recomputes(RecomputeModule module) const {
  return full_recompute_ || (s_.recompute.granularity == RecomputeGranularity::kSelective && s_.recompute.has(module));
}

void LayerCostModel::add_gemm(Builder& c, const char* name, Gemm g, bool recomputed, Precision p) const {
  const double fwd = kernels_.gemm({g.m, g.n, g.k, g.batch}, p).value();
  // Backward: data gradient dX = dY·Wᵀ (m×k, inner n) and weight gradient dW = Xᵀ·dY (k×n, inner m),
  // both with the split accumulator of TE's FP8 recipes (it only costs time where the tensor cores
  // have a fast mode, see compute::Accumulation).
  const auto [dgrad, wgrad] = gradient_gemm_seconds(g, p);
  push_gemm(c, name, g, recomputed, p, fwd, dgrad, wgrad);
}

std::pair<double, double> LayerCostModel::gradient_gemm_seconds(Gemm g, Precision p) const {
  return {kernels_.gemm({g.m, g.k, g.n, g.batch}, p, compute::Accumulation::kSplit).value(),
          kernels_.gemm({g.k, g.n, g.m, g.batch}, p, compute::Accumulation::kSplit).value()};
}

void LayerCostModel::add_expert_gemm(Builder& c, const char* name, Gemm g, bool recomputed) const {
  if (!kernels_.profile() && !kernels_.query_log()) {
    add_gemm(c, name, g, recomputed);
    return;
  }
  // One grouped GEMM per part over the local experts' equal (balanced) loads, as the simulation
  // re-costs it over ragged loads (compute/grouped_gemm); the profile's grouped rows price it.
  const std::vector<std::int64_t> tokens(static_cast<std::size_t>(g.batch), g.m);
  auto part = [&](compute::GemmPart gp) {
    return compute::grouped_gemm(kernels_, {tokens, g.n, g.k, gp}, s_.precision).value();
  };
  push_gemm(c, name, g, recomputed, s_.precision, part(compute::GemmPart::kForward), part(compute::GemmPart::kDgrad),
            part(compute::GemmPart::kWgrad));
}

void LayerCostModel::push_gemm(Builder& c, const char* name, Gemm g, bool recomputed, Precision p, double fwd,
                               double dgrad, double wgrad) const {
  recomputed = recomputed || (full_recompute_ && c.checkpointed);
  double cast_fwd = 0, cast_bwd = 0;
  if (gemm_operand_bytes(p) < 2.0) {
    // Low-precision recipes quantise each activation operand (the input X and the output gradient dY):
    // a row-wise copy for the forward / data-gradient GEMM and a column-wise one for the weight
    // gradient. TE fuses these casts into neighbouring kernels, so they cost bandwidth but no launch.
    const double in_elems = static_cast<double>(g.m * g.k * g.batch);
    const double out_elems = static_cast<double>(g.m * g.n * g.batch);
    const double per_elem = quantisation_bytes_per_element(p);
    cast_fwd = kernels_.memory_bound_fused(Bytes(in_elems * per_elem), hw::MemoryKernel::kCastFp8).value();
    cast_bwd = kernels_.memory_bound_fused(Bytes(out_elems * per_elem), hw::MemoryKernel::kCastFp8).value();
  }
  const double flops = gemm_flops(g.m, g.n, g.k, g.batch);
  const LayerOp forward{name, OpKind::kCompute, OpPhase::kForward, fwd + cast_fwd, 0, 0, flops};
  c.forward.push_back(forward);
  // The weight gradient follows the data gradient in reverse order, so it is pushed first here.
  c.backward_in_forward_order.push_back({name, OpKind::kCompute, OpPhase::kWgrad, wgrad, 0, 0, flops});
  c.backward_in_forward_order.push_back({name, OpKind::kCompute, OpPhase::kDgrad, dgrad + cast_bwd, 0, 0, flops});
  if (recomputed) c.recompute.push_back(with_phase(forward, OpPhase::kRecompute));
}

void LayerCostModel::add_memory_op(Builder& c, const char* name, double forward_bytes, double backward_bytes,
                                   bool recomputed, hw::MemoryKernel kind) const {
  recomputed = recomputed || (full_recompute_ && c.checkpointed);
  const LayerOp forward{name, OpKind::kCompute, OpPhase::kForward,
                        kernels_.memory_bound(Bytes(forward_bytes), kind).value(), 0, forward_bytes, 0};
  c.forward.push_back(forward);
  c.backward_in_forward_order.push_back({name, OpKind::kCompute, OpPhase::kBackward,
                                         kernels_.memory_bound(Bytes(backward_bytes), kind).value(), 0, backward_bytes,
                                         0});
  if (recomputed) c.recompute.push_back(with_phase(forward, OpPhase::kRecompute));
}

void LayerCostModel::add_comm(Builder& c, const char* name, OpKind kind, CommGroup group, double seconds,
                              double latency_s, double bytes, bool recomputed) const {
  const LayerOp op{name, kind, OpPhase::kForward, seconds, std::min(latency_s, seconds), bytes, 0, group};
  c.forward.push_back(op);
  c.backward_in_forward_order.push_back(with_phase(op, OpPhase::kBackward));
  if (recomputed) c.recompute.push_back(with_phase(op, OpPhase::kRecompute));
}

void LayerCostModel::add_tp_collective(Builder& c, const char* name, Op fwd_op, double bytes, double overlap_window_s,
                                       bool recomputed) const {
  if (s_.parallel.tp <= 1) return;
  recomputed = recomputed || (full_recompute_ && c.checkpointed);
  const double t = comms_.time(fwd_op, Bytes(bytes), shape_.groups.tp).value();
  // With TE's userbuffers overlap (tp_comm_overlap) the collective is split into chunks that run
  // under the neighbouring GEMM; only what exceeds the GEMM stays exposed. The backward runs the
  // transposed collective (all-gather ↔ reduce-scatter) at the same cost.
  const double exposed = s_.parallel.tp_comm_overlap ? std::max(0.0, t - overlap_window_s) : t;
  add_comm(c, name, OpKind::kTpComm, CommGroup::kTp, exposed, comms_.latency(fwd_op, shape_.groups.tp).value(), bytes,
           recomputed);
}

// Transformer Engine's tensor-parallel linears with sequence parallelism (TE pytorch/module/linear.py,
// layernorm_linear.py, base.py grad_output_preprocess): the forward all-gathers the column-parallel
// input and reduce-scatters the row-parallel output, both blocking; the backward all-gathers the
// row-parallel output gradient (blocking), then, asynchronously, re-gathers the column-parallel input
// for the weight gradient under the data-gradient GEMM and reduce-scatters the data gradient under
// the weight-gradient GEMM. In the FP8-family recipes every all-gather moves the quantized tensor
// (gather_along_first_dim with the quantizer: distributed.py _all_gather_fp8, _mxfp8, _nvfp4 and the
// blockwise one); the reduce-scatters move 16-bit GEMM outputs. With userbuffers overlap
// (tp_comm_overlap) the blocking ones are split into chunks under their own GEMM as well.
void LayerCostModel::add_column_parallel_comm(Builder& c, const char* name, Gemm g, bool recomputed) const {
  const auto& p = s_.parallel;
  // Without sequence parallelism the column-parallel input is already whole; its data gradient is
  // all-reduced by the row-parallel side's transposed op (see add_row_parallel_comm).
  if (p.tp <= 1 || !p.sequence_parallel) return;
  recomputed = recomputed || (full_recompute_ && c.checkpointed);
  const double elems = static_cast<double>(g.m * g.k);
  const double gather_bytes = elems * quantized_activation_bytes(s_.precision);
  const double scatter_bytes = elems * kActivationBytes;
  const double gather = comms_.time(Op::kAllGather, Bytes(gather_bytes), shape_.groups.tp).value();
  const double scatter = comms_.time(Op::kReduceScatter, Bytes(scatter_bytes), shape_.groups.tp).value();
  const double gather_latency = comms_.latency(Op::kAllGather, shape_.groups.tp).value();
  const double scatter_latency = comms_.latency(Op::kReduceScatter, shape_.groups.tp).value();
  const double fwd_gemm = kernels_.gemm({g.m, g.n, g.k, g.batch}, s_.precision).value();
  const auto [dgrad, wgrad] = gradient_gemm_seconds(g, s_.precision);
  const double fwd = p.tp_comm_overlap ? std::max(0.0, gather - fwd_gemm) : gather;
  const double bwd = std::max(0.0, gather - dgrad) + std::max(0.0, scatter - wgrad);
  const LayerOp forward{name, OpKind::kTpComm, OpPhase::kForward, fwd, std::min(gather_latency, fwd), gather_bytes, 0,
                        CommGroup::kTp};
  c.forward.push_back(forward);
  c.backward_in_forward_order.push_back({name, OpKind::kTpComm, OpPhase::kBackward, bwd,
                                         std::min(gather_latency + scatter_latency, bwd), gather_bytes + scatter_bytes,
                                         0, CommGroup::kTp});
  if (recomputed) c.recompute.push_back(with_phase(forward, OpPhase::kRecompute));
}

void LayerCostModel::add_row_parallel_comm(Builder& c, const char* name, Gemm g, bool recomputed) const {
  const auto& p = s_.parallel;
  if (p.tp <= 1) return;
  const double elems = static_cast<double>(g.m * g.n);
  if (!p.sequence_parallel) {
    // All-reduce of the output forward; its transpose, the all-reduce of the column-parallel data
    // gradient, runs blocking in the backward as in Megatron's 2021 mappings (the async variant of
    // later releases is not modelled).
    add_tp_collective(c, name, Op::kAllReduce, elems * kActivationBytes, 0.0, recomputed);
    return;
  }
  recomputed = recomputed || (full_recompute_ && c.checkpointed);
  const double scatter_bytes = elems * kActivationBytes;
  const double gather_bytes = elems * quantized_activation_bytes(s_.precision);
  const double scatter = comms_.time(Op::kReduceScatter, Bytes(scatter_bytes), shape_.groups.tp).value();
  const double gather = comms_.time(Op::kAllGather, Bytes(gather_bytes), shape_.groups.tp).value();
  const double fwd_gemm = kernels_.gemm({g.m, g.n, g.k, g.batch}, s_.precision).value();
  const double dgrad = gradient_gemm_seconds(g, s_.precision).first;
  const double fwd = p.tp_comm_overlap ? std::max(0.0, scatter - fwd_gemm) : scatter;
  const double bwd = p.tp_comm_overlap ? std::max(0.0, gather - dgrad) : gather;
  const double scatter_latency = comms_.latency(Op::kReduceScatter, shape_.groups.tp).value();
  const LayerOp forward{name,          OpKind::kTpComm, OpPhase::kForward, fwd, std::min(scatter_latency, fwd),
                        scatter_bytes, 0,               CommGroup::kTp};
  c.forward.push_back(forward);
  c.backward_in_forward_order.push_back({name, OpKind::kTpComm, OpPhase::kBackward, bwd,
                                         std::min(comms_.latency(Op::kAllGather, shape_.groups.tp).value(), bwd),
                                         gather_bytes, 0, CommGroup::kTp});
  if (recomputed) c.recompute.push_back(with_phase(forward, OpPhase::kRecompute));
}

void LayerCostModel::add_attention(Builder& c, std::int64_t key_span) const {
  const auto& m = s_.model;
  const auto& p = s_.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t heads = m.num_attention_heads / p.tp;
  const bool sp = p.sequence_parallel;
  const double act_bytes_sp = static_cast<double>(shape_.sp_tokens * h) * kActivationBytes;
  const bool rc_norm = recomputes(RecomputeModule::kLayernorm);

  // Pre-attention norm: read x, write normalised x; backward reads x, dy, writes dx.
  add_memory_op(c, "input_norm", 2 * act_bytes_sp, 3 * act_bytes_sp, rc_norm);

  std::int64_t head_dim_qk = m.kv_channels, head_dim_v = m.kv_channels;
  if (m.multi_latent_attention) {
    const auto& mla = *m.multi_latent_attention;
    head_dim_qk = mla.qk_head_dim + mla.qk_pos_emb_head_dim;
    head_dim_v = mla.v_head_dim;
    // Megatron gathers the sequence-parallel input before the down-projections.
    add_column_parallel_comm(c, "attn_all_gather", {shape_.tokens, heads * head_dim_qk, h, 1}, rc_norm);
    const bool rc_up = recomputes(RecomputeModule::kMlaUpProj);
    if (mla.q_lora_rank > 0) {
      add_gemm(c, "q_down_proj", {shape_.tokens, mla.q_lora_rank, h, 1}, false);
      add_gemm(c, "q_up_proj", {shape_.tokens, heads * head_dim_qk, mla.q_lora_rank, 1}, rc_up);
    } else {
      add_gemm(c, "q_proj", {shape_.tokens, heads * head_dim_qk, h, 1}, false);
    }
    add_gemm(c, "kv_down_proj", {shape_.tokens, mla.kv_lora_rank + mla.qk_pos_emb_head_dim, h, 1}, false);
    add_gemm(c, "kv_up_proj", {shape_.tokens, heads * (mla.qk_head_dim + mla.v_head_dim), mla.kv_lora_rank, 1}, rc_up);
  } else {
    const std::int64_t groups = m.num_query_groups / p.tp;
    const std::int64_t qkv_width = (heads + 2 * groups) * m.kv_channels;
    add_column_parallel_comm(c, "attn_all_gather", {shape_.tokens, qkv_width, h, 1}, rc_norm);
    add_gemm(c, "qkv_proj", {shape_.tokens, qkv_width, h, 1}, false);
    // Rotary embedding of q and k.
    const double qk_bytes = static_cast<double>(shape_.tokens * (heads + groups) * m.kv_channels) * kActivationBytes;
    add_memory_op(c, "rotary", 2 * qk_bytes, 2 * qk_bytes, false);
  }

  // Attention core.
  compute::AttentionShape a;
  a.batch_heads = s_.training.micro_batch_size * heads;
  a.query_len = s_.training.seq_length / p.cp;
  a.key_span = key_span;
  a.head_dim_qk = head_dim_qk;
  a.head_dim_v = head_dim_v;
  a.causal = m.causal;
  a.cp_ring_steps = p.cp;
  double core_fwd = 0, core_bwd = 0;
  if (s_.attention_backend == AttentionBackend::kFlash) {
    core_fwd = kernels_.flash_attention_forward(a).value();
    core_bwd = kernels_.flash_attention_backward(a).value();
  } else {
    core_fwd = kernels_.unfused_attention_forward(a, s_.precision).value();
    core_bwd = kernels_.unfused_attention_backward(a, s_.precision).value();
  }
  const bool rc_core = recomputes(RecomputeModule::kCoreAttn);  // true under full recompute too
  const double core_flops = compute::KernelCostModel::attention_forward_flops(a).value();
  const LayerOp core{"core_attention", OpKind::kCompute, OpPhase::kForward, core_fwd, 0, 0, core_flops};
  c.forward.push_back(core);
  // The backward recomputes the scores and runs four GEMMs: 2.5× the forward's FLOPs.
  c.backward_in_forward_order.push_back(
      {"core_attention", OpKind::kCompute, OpPhase::kBackward, core_bwd, 0, 0, 2.5 * core_flops});
  if (rc_core) c.recompute.push_back(with_phase(core, OpPhase::kRecompute));

  if (p.cp > 1) {
    // Ring context parallelism (Megatron cp_comm_type p2p): K and V chunks circulate cp−1 steps,
    // each step overlapped with the attention of the previous chunk; backward also returns dK, dV.
    const std::int64_t kv_heads = m.multi_latent_attention ? heads : m.num_query_groups / p.tp;
    const double chunk_bytes = static_cast<double>(s_.training.micro_batch_size * a.query_len * kv_heads *
                                                   (head_dim_qk + head_dim_v)) *
                               kActivationBytes;
    const double step = comms_.time(Op::kSendRecv, Bytes(chunk_bytes), shape_.groups.cp).value();
    const double latency = comms_.latency(Op::kSendRecv, shape_.groups.cp).value();
    const double steps = static_cast<double>(p.cp - 1);
    const double fwd_exposed = std::max(0.0, step * steps - core_fwd * steps / static_cast<double>(p.cp));
    const double bwd_exposed = std::max(0.0, 2.0 * step * steps - core_bwd * steps / static_cast<double>(p.cp));
    const LayerOp fwd{"cp_ring_exchange", OpKind::kCpComm, OpPhase::kForward, fwd_exposed,
                      std::min(latency * steps, fwd_exposed), chunk_bytes * steps, 0, CommGroup::kCp};
    c.forward.push_back(fwd);
    c.backward_in_forward_order.push_back({"cp_ring_exchange", OpKind::kCpComm, OpPhase::kBackward, bwd_exposed,
                                           std::min(2 * latency * steps, bwd_exposed), 2 * chunk_bytes * steps, 0,
                                           CommGroup::kCp});
    if (rc_core) c.recompute.push_back(with_phase(fwd, OpPhase::kRecompute));
    add_cp_corrections(c, heads * head_dim_v, kv_heads * (head_dim_qk + head_dim_v), rc_core);
  }

  // Output projection and its TP reduction.
  const std::int64_t out_in = heads * head_dim_v;
  add_gemm(c, "attn_out_proj", {shape_.tokens, h, out_in, 1}, false);
  add_row_parallel_comm(c, sp ? "attn_reduce_scatter" : "attn_all_reduce", {shape_.tokens, h, out_in, 1}, false);
  // Residual add (+ dropout): read two tensors, write one.
  add_memory_op(c, "attn_residual", 3 * act_bytes_sp, 3 * act_bytes_sp, false);
}

void LayerCostModel::add_cp_corrections(Builder& c, std::int64_t out_width, std::int64_t kv_width,
                                        bool recomputed) const {
  // Transformer Engine's ring attention (attention/dot_product_attention/context_parallel.py,
  // AttnFuncWithCPAndKVP2P) keeps each step's output and merges it afterwards in fp32: the first
  // step initialises the fp32 output (read 2 B, write 4 B per element), every later one rescales
  // and adds (read the step's 2 B output, read and write the 4 B sum), and the result is cast back
  // (read 4, write 2). The backward adds each step's dQ into the rank's dQ and each step's dK, dV
  // into the gradients that travel on (read both 2 B, write 2 B). Every step launches these kernels
  // besides its attention call.
  const double cp = static_cast<double>(s_.parallel.cp);
  const double out_elems = static_cast<double>(shape_.tokens * out_width);
  const double q_elems = static_cast<double>(shape_.tokens * out_width);
  const double kv_elems = static_cast<double>(shape_.tokens * kv_width);
  const double fwd_bytes = out_elems * (6.0 + 10.0 * (cp - 1.0) + 6.0);
  const double bwd_bytes = cp * (q_elems + kv_elems) * 6.0;
  const double fwd = kernels_.memory_bound(Bytes(fwd_bytes)).value() + (cp + 1.0) * kernels_.launch_gap().value();
  const double bwd = kernels_.memory_bound(Bytes(bwd_bytes)).value() + 2.0 * cp * kernels_.launch_gap().value();
  const LayerOp forward{"cp_out_correction", OpKind::kCompute, OpPhase::kForward, fwd, 0, fwd_bytes, 0};
  c.forward.push_back(forward);
  c.backward_in_forward_order.push_back(
      {"cp_grad_correction", OpKind::kCompute, OpPhase::kBackward, bwd, 0, bwd_bytes, 0});
  if (recomputed) c.recompute.push_back(with_phase(forward, OpPhase::kRecompute));
}

void LayerCostModel::add_dense_mlp(Builder& c, const char* prefix, std::int64_t width, bool recomputed) const {
  const auto& m = s_.model;
  const auto& p = s_.parallel;
  const bool shared = std::string_view(prefix) == "shared";
  const std::int64_t h = m.hidden_size;
  const std::int64_t local = width / p.tp;
  const std::int64_t fc1_out = (m.gated_linear_unit ? 2 : 1) * local;
  add_column_parallel_comm(c, shared ? "shared_all_gather" : "mlp_all_gather", {shape_.tokens, fc1_out, h, 1}, recomputed);
  add_gemm(c, shared ? "shared_fc1" : "fc1", {shape_.tokens, fc1_out, h, 1}, recomputed);
  // Activation (GELU or SwiGLU): read fc1 output, write the activation; backward reads both + dy.
  const double act_in = static_cast<double>(shape_.tokens * fc1_out) * kActivationBytes;
  const double act_out = static_cast<double>(shape_.tokens * local) * kActivationBytes;
  add_memory_op(c, shared ? "shared_activation" : "activation", act_in + act_out, 2 * act_in + act_out,
                recomputed || recomputes(RecomputeModule::kMoeAct));
  add_gemm(c, shared ? "shared_fc2" : "fc2", {shape_.tokens, h, local, 1}, recomputed);
  const char* reduce_name = p.sequence_parallel ? (shared ? "shared_reduce_scatter" : "mlp_reduce_scatter")
                                                : (shared ? "shared_all_reduce" : "mlp_all_reduce");
  add_row_parallel_comm(c, reduce_name, {shape_.tokens, h, local, 1}, recomputed);
}

void LayerCostModel::add_moe(Builder& c) const {
  const auto& m = s_.model;
  const auto& p = s_.parallel;
  const std::int64_t h = m.hidden_size;
  const std::int64_t experts = m.num_moe_experts;
  const std::int64_t topk = m.moe_router_topk;
  const std::int64_t local_experts = experts / p.ep;
  const std::int64_t t = shape_.sp_tokens;  // the MoE block routes the rank's sequence-parallel shard
  const bool rc_moe = recomputes(RecomputeModule::kMoe);

  // Router: logits GEMM (h × E), then softmax/sigmoid + top-k over E scores in fp32.
  add_gemm(c, "router", {t, experts, h, 1}, rc_moe);
  const double score_bytes = static_cast<double>(t * experts) * 4.0 * 3.0;
  // The profile's softmax router (Megatron's default score function; the model spec does not say).
  add_memory_op(c, "router_topk", score_bytes, score_bytes, rc_moe, hw::MemoryKernel::kRouterSoftmaxTopk);

  // Permute tokens into expert order (read tokens, write k copies), unpermute on the way back.
  const double copies_bytes = static_cast<double>(t * topk * h) * kActivationBytes;
  const double token_bytes = static_cast<double>(t * h) * kActivationBytes;
  // The dispatcher's preprocessing counts the tokens per expert (routing_map.sum over the rank's
  // tokens: one byte read per token and expert); the permutation follows.
  add_memory_op(c, "moe_preprocess", static_cast<double>(t * experts), 0.0, rc_moe);
  add_memory_op(c, "permute", copies_bytes + token_bytes, copies_bytes + token_bytes, rc_moe, hw::MemoryKernel::kPermute);
  if (s_.moe.pays_host_sync()) {
    // The token counts come back to the host here (they size the all-to-alls and the grouped GEMM's
    // splits, with or without EP); the queue drains and the GPU waits for the host's next launches.
    // The backward reuses the counts; a recomputed forward reads them again.
    const LayerOp idle{"host_sync", OpKind::kHostIdle, OpPhase::kForward, s_.moe.host_sync_idle_s};
    c.forward.push_back(idle);
    if (rc_moe || (full_recompute_ && c.checkpointed)) c.recompute.push_back(with_phase(idle, OpPhase::kRecompute));
  }

  // Dispatch and combine. Balanced routing: each rank receives t·k token copies in total.
  // Balanced routing: each expert receives its share; padded to capacity, capacity_factor × it.
  const double imbalance = s_.moe.balanced_load_scale();
  double combine = 0, combine_latency = 0, combine_bytes = 0;
  if (p.ep > 1) {
    double dispatch = 0, dispatch_bytes = 0, dispatch_latency = 0;
    if (s_.moe.dispatcher == Dispatcher::kAllgather) {
      // All-gather the routing input over the EP group, compute local experts, reduce-scatter back.
      const double gathered = static_cast<double>(p.ep) * token_bytes;
      dispatch = comms_.time(Op::kAllGather, Bytes(gathered), shape_.groups.ep).value();
      combine = comms_.time(Op::kReduceScatter, Bytes(gathered), shape_.groups.ep).value();
      dispatch_latency = comms_.latency(Op::kAllGather, shape_.groups.ep).value();
      combine_latency = comms_.latency(Op::kReduceScatter, shape_.groups.ep).value();
      dispatch_bytes = combine_bytes = gathered;
    } else {
      // Rows per routed token over NVLink and over the network (moe/dispatch_traffic: one row per
      // token and expert for alltoall; one per domain and per rank for DeepEP / HybridEP).
      const moe::DispatchRows rows = moe::dispatch_rows({m.num_moe_experts, topk, p.ep, shape_.groups.ep.per_domain,
                                                          s_.moe.routing.device_limited_nodes, s_.moe.dispatcher});
      const double row_elems = static_cast<double>(t * h) * imbalance;
      const double d_elem = moe::dispatch_element_bytes(s_.moe.dispatcher, s_.precision, s_.moe.fp8_dispatch);
      // Volume: every (token, expert) copy for alltoall, this rank's own included, as the collective
      // volumes elsewhere; the rows actually sent for the deduplicating dispatchers.
      const bool dedup = deduplicates(s_.moe.dispatcher);
      const double rows_counted = dedup ? rows.nvlink + rows.network : static_cast<double>(topk);
      dispatch_bytes = row_elems * rows_counted * d_elem;
      combine_bytes = row_elems * rows_counted * kActivationBytes;
      // DeepEP and HybridEP do not move their NVLink rows at the link rate: where the GPU preset
      // publishes the kernel's algorithm bandwidth, collective::ep_kernel_time prices them at it.
      const auto transfer_time = [&](double elem, hw::EpKernelPhase phase) {
        const Bytes nvlink(row_elems * rows.nvlink * elem), network(row_elems * rows.network * elem);
        if (!dedup) return comms_.alltoall_split_time(nvlink, network, shape_.groups.ep).value();
        return comms_
            .ep_kernel_time(name_of(kDispatcherNames, s_.moe.dispatcher), phase, s_.moe.kernel_sms(), nvlink, network,
                            shape_.groups.ep)
            .value();
      };
      dispatch = transfer_time(d_elem, d_elem < kActivationBytes ? hw::EpKernelPhase::kDispatchFp8
                                                                 : hw::EpKernelPhase::kDispatchBf16);
      combine = transfer_time(kActivationBytes, hw::EpKernelPhase::kCombine);
      dispatch_latency = combine_latency = comms_.latency(Op::kAllToAll, shape_.groups.ep).value();
    }
    add_comm(c, "dispatch", OpKind::kEpComm, CommGroup::kEp, dispatch, dispatch_latency, dispatch_bytes, rc_moe);
  }
  double etp_ag = 0, etp_rs = 0, etp_bytes = 0;
  if (p.etp > 1) {
    etp_bytes = static_cast<double>(p.etp * t * topk * h) * kActivationBytes * imbalance;
    etp_ag = comms_.time(Op::kAllGather, Bytes(etp_bytes), shape_.groups.etp).value();
    etp_rs = comms_.time(Op::kReduceScatter, Bytes(etp_bytes), shape_.groups.etp).value();
    add_comm(c, "etp_all_gather", OpKind::kTpComm, CommGroup::kEtp, etp_ag,
             comms_.latency(Op::kAllGather, shape_.groups.etp).value(),
             etp_bytes, false);
  }

  // Expert GEMMs: t·k·etp token copies spread over the local experts.
  const std::int64_t width = m.moe_ffn_hidden_size / p.etp;
  const std::int64_t fc1_out = (m.gated_linear_unit ? 2 : 1) * width;
  const double copies_per_expert =
      imbalance * static_cast<double>(t * topk * p.etp) / static_cast<double>(local_experts);
  const std::int64_t m_e = std::max<std::int64_t>(1, static_cast<std::int64_t>(copies_per_expert + 0.5));
  // A grouped GEMM is one launch over all local experts; without it, one GEMM per expert.
  const std::int64_t batch = local_experts;
  // Every op add_expert_gemm appends (forward, both gradients, recompute) records the grouped problem
  // it stands for; the times are those of the batched GEMM, or of the profile's grouped GEMMs.
  const auto expert_gemm = [&](const char* name, std::int64_t n, std::int64_t k) {
    const std::size_t f = c.forward.size(), b = c.backward_in_forward_order.size(), r = c.recompute.size();
    add_expert_gemm(c, name, {m_e, n, k, batch}, rc_moe);
    const auto describe = [&](std::vector<LayerOp>& ops, std::size_t from) {
      for (std::size_t i = from; i < ops.size(); ++i) {
        ops[i].grouped_m = m_e;
        ops[i].grouped_n = n;
        ops[i].grouped_k = k;
        ops[i].local_experts = local_experts;
        ops[i].grouped_precision = s_.precision;
      }
    };
    describe(c.forward, f);
    describe(c.backward_in_forward_order, b);
    describe(c.recompute, r);
  };
  expert_gemm("expert_fc1", fc1_out, h);
  const double act_in = static_cast<double>(m_e * batch * fc1_out) * kActivationBytes;
  const double act_out = static_cast<double>(m_e * batch * width) * kActivationBytes;
  add_memory_op(c, "expert_activation", act_in + act_out, 2 * act_in + act_out,
                rc_moe || recomputes(RecomputeModule::kMoeAct));
  expert_gemm("expert_fc2", h, width);
  if (!s_.moe.grouped_gemm && local_experts > 1 && !kernels_.calibrated_grouped(s_.precision)) {
    // One launch per expert and GEMM instead of one grouped launch (3 per expert forward, 6 backward);
    // a profile's measured loop of GEMMs already includes them.
    const double gaps = 3.0 * static_cast<double>(local_experts - 1) * kernels_.launch_gap().value();
    c.forward.push_back({"expert_launches", OpKind::kCompute, OpPhase::kForward, gaps, 0, 0, 0});
    c.backward_in_forward_order.push_back({"expert_launches", OpKind::kCompute, OpPhase::kBackward, 2 * gaps, 0, 0, 0});
  }
  if (p.etp > 1) {
    add_comm(c, "etp_reduce_scatter", OpKind::kTpComm, CommGroup::kEtp, etp_rs,
             comms_.latency(Op::kReduceScatter, shape_.groups.etp).value(), etp_bytes, false);
  }
  if (p.ep > 1) add_comm(c, "combine", OpKind::kEpComm, CommGroup::kEp, combine, combine_latency, combine_bytes, rc_moe);
  add_memory_op(c, "unpermute", copies_bytes + token_bytes, copies_bytes + token_bytes, rc_moe,
                hw::MemoryKernel::kUnpermute);

  if (m.moe_shared_expert_intermediate_size > 0) {
    add_dense_mlp(c, "shared", m.moe_shared_expert_intermediate_size,
                  recomputes(RecomputeModule::kSharedExperts) || rc_moe);
  }
}

OpProgram LayerCostModel::transformer_layer_ops(bool moe, std::int64_t key_span) const {
  Builder c;
  c.checkpointed = true;  // full recompute checkpoints whole layers; the embedding and the loss are outside
  add_attention(c, key_span);
  const double act_bytes_sp = static_cast<double>(shape_.sp_tokens * s_.model.hidden_size) * kActivationBytes;
  add_memory_op(c, "pre_mlp_norm", 2 * act_bytes_sp, 3 * act_bytes_sp, recomputes(RecomputeModule::kLayernorm));
  if (moe) {
    add_moe(c);
  } else {
    add_dense_mlp(c, "mlp", s_.model.ffn_hidden_size, recomputes(RecomputeModule::kMlp));
  }
  add_memory_op(c, "mlp_residual", 3 * act_bytes_sp, 3 * act_bytes_sp, false);
  OpProgram p = finished(c);
  add_activation_offload(p, moe);
  return priced(std::move(p));
}

void LayerCostModel::add_activation_offload(OpProgram& p, bool moe) const {
  const double bytes = memory::layer_offload(s_, moe).total();
  if (bytes <= 0) return;
  // Megatron's offload manager copies a module's saved inputs to pinned host memory on a side stream
  // as soon as its forward ends, and prefetches them back one layer ahead in the backward: the copies
  // hide behind a layer's worth of work (fine_grained_activation_offloading.md "make sure the
  // offloading/reloading could be overlapped with computing"). What a layer's pass does not cover, the
  // compute stream waits for before it frees (forward) or reads (backward) them.
  const double copy_s = bytes / s_.system.host_link_bandwidth.value();
  const auto window = [](const std::vector<LayerOp>& ops) {
    double t = 0;
    for (const LayerOp& op : ops) t += op.seconds;
    return t;
  };
  LayerOp offload{"activation_offload", OpKind::kOffloadComm, OpPhase::kForward};
  offload.seconds = std::max(0.0, copy_s - window(p.forward));
  offload.bytes = bytes;
  LayerOp reload{"activation_reload", OpKind::kOffloadComm, OpPhase::kBackward};
  reload.seconds = std::max(0.0, copy_s - window(p.backward));
  reload.bytes = bytes;
  p.forward.push_back(offload);
  // Reloaded before the gradient ops read them, after any recomputed forward (which needs none).
  const auto first_gradient =
      std::find_if(p.backward.begin(), p.backward.end(), [](const LayerOp& op) { return op.phase != OpPhase::kRecompute; });
  p.backward.insert(first_gradient, reload);
}

const LayerCostModel::LayerKind& LayerCostModel::layer(std::int64_t layer) const {
  const bool moe = s_.model.layer_is_moe(layer);
  const std::int64_t span = s_.model.attention_span(layer, s_.training.seq_length);
  const auto key = std::make_pair(moe, span);
  auto it = layer_kinds_.find(key);
  if (it == layer_kinds_.end()) {
    OpProgram ops = transformer_layer_ops(moe, span);
    UnitCost cost = ops.cost();
    const HostGate forward = host_gate(ops.forward), backward = host_gate(ops.backward);
    it = layer_kinds_.emplace(key, LayerKind{std::move(ops), cost, forward, backward}).first;
  }
  return it->second;
}

OpProgram LayerCostModel::embedding_ops() const {
  Builder c;
  const double out = static_cast<double>(shape_.sp_tokens * s_.model.hidden_size) * kActivationBytes;
  // Lookup writes the rows; the backward scatter-adds them into the fp32 gradient.
  add_memory_op(c, "embedding", 2 * out, 4 * out, false);
  if (s_.parallel.tp > 1) {
    // Vocab-parallel embedding: partial rows are summed over TP (reduce-scatter with SP).
    const double full = static_cast<double>(shape_.tokens * s_.model.hidden_size) * kActivationBytes;
    add_tp_collective(c, "embedding_reduce", s_.parallel.sequence_parallel ? Op::kReduceScatter : Op::kAllReduce,
                      full, 0.0, false);
  }
  return priced(finished(c));
}

OpProgram LayerCostModel::output_head_ops() const {
  Builder c;
  const auto& m = s_.model;
  const std::int64_t vocab_local = m.vocab_size / s_.parallel.tp;
  const double full = static_cast<double>(shape_.tokens * m.hidden_size) * kActivationBytes;
  const double gemm_s = kernels_.gemm({shape_.tokens, vocab_local, m.hidden_size, 1}, s_.precision).value();
  add_memory_op(c, "final_norm", 2 * static_cast<double>(shape_.sp_tokens * m.hidden_size) * kActivationBytes,
                3 * static_cast<double>(shape_.sp_tokens * m.hidden_size) * kActivationBytes, false);
  if (s_.parallel.sequence_parallel) add_tp_collective(c, "head_all_gather", Op::kAllGather, full, gemm_s, false);
  // The LM head runs in 16-bit in every Megatron recipe (TE keeps the output layer out of FP8).
  const Precision keep = s_.precision == Precision::kFp16 ? Precision::kFp16 : Precision::kBf16;
  add_gemm(c, "lm_head", {shape_.tokens, vocab_local, m.hidden_size, 1}, false, keep);
  // Vocab-parallel cross-entropy in fp32: read logits, max/sum passes, write fp32 softmax for the
  // backward; backward reads it and writes 16-bit logit gradients.
  // Megatron's vocab_parallel_cross_entropy (core/tensor_parallel/cross_entropy.py, unfused path)
  // on the [tokens, V/tp] logits: max (read 2 B), cast to fp32 (2 + 4), subtract max (4 + 4), exp
  // (4 + 4), sum (4), divide (4 + 4) = 36 B per logit forward; backward: one-hot subtract (4 + 4),
  // scale by the loss gradient (4 + 4), cast to 16-bit (4 + 2) = 22 B. These passes are not
  // recomputed (the loss sits outside the checkpointed layers).
  const double logits = static_cast<double>(shape_.tokens * vocab_local);
  const double ce_fwd = kernels_.memory_bound(Bytes(logits * 36.0)).value() + 4 * kernels_.launch_gap().value();
  const double ce_bwd = kernels_.memory_bound(Bytes(logits * 22.0)).value() + 2 * kernels_.launch_gap().value();
  c.forward.push_back({"cross_entropy", OpKind::kCompute, OpPhase::kForward, ce_fwd, 0, logits * 36.0, 0});
  c.backward_in_forward_order.push_back(
      {"cross_entropy", OpKind::kCompute, OpPhase::kBackward, ce_bwd, 0, logits * 22.0, 0});
  if (s_.parallel.tp > 1) {
    // Max and sum-exp all-reduces over TP (one fp32 per token each), latency-bound.
    const double small = static_cast<double>(shape_.tokens) * 4.0;
    add_tp_collective(c, "loss_max_all_reduce", Op::kAllReduce, small, 0.0, false);
    add_tp_collective(c, "loss_sum_all_reduce", Op::kAllReduce, small, 0.0, false);
  }
  return priced(finished(c));
}

OpProgram LayerCostModel::mtp_projection_ops() const {
  Builder c;
  const std::int64_t h = s_.model.hidden_size;
  // eh_proj: concat(norm(h), norm(emb)) [2h] → h, replicated over TP in Megatron's MTP block.
  add_gemm(c, "mtp_eh_proj", {shape_.tokens, h, 2 * h, 1}, false);
  add_memory_op(c, "mtp_norms", 4 * static_cast<double>(shape_.tokens * h) * kActivationBytes,
                6 * static_cast<double>(shape_.tokens * h) * kActivationBytes, false);
  return priced(finished(c));
}

}  // namespace moesim::program
