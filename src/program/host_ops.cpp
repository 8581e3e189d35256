#include "program/host_ops.hpp"

#include <string>

#include "core/error.hpp"

namespace moesim::program {
namespace {

// Counts of framework ops per module in an eager Megatron-Core step on Transformer Engine's layer
// spec, read from their code (megatron/core/transformer/*.py, moe/*.py, TE pytorch/module/*.py).
// A unit is one PyTorch op dispatch with its launch; a TE module call costs about 2.7 of them: TE
// issue #2053 (2025-08) times one Linear forward (BF16, hidden 2048, 8192 tokens) on a GB200's Grace
// at 100 µs of CPU for TE's module and 37 µs for PyTorch's, one GEMM kernel each, so the count
// rounds that to 3. A module's backward runs through one autograd node and costs 1.75 × its forward:
// TE issue #2897 (2026-04) measures its grouped MLP at 1.2 ms of CPU forward and 2.1 ms backward.
// What one unit costs in seconds on each host kind is the fitted constant (hw/host_costs.hpp).
constexpr double kTeModule = 3.0;
constexpr double kBackwardOverForward = 1.75;
constexpr double kTeModuleBackward = kTeModule * kBackwardOverForward;
// TE's grouped GEMM launches one cuBLAS GEMM per local expert from a C++ loop (general_grouped_gemm):
// per expert a fraction of a Python op. #2897's grouped MLP (64 local experts, two GEMMs and the
// activation) costs 1.2 ms / 37 µs ≈ 32 units forward, about 0.25 per expert and GEMM.
constexpr double kGroupedGemmPerExpert = 0.25;
// An NCCL collective issued from inside a TE module (its sequence-parallel gathers and scatters) or
// from Megatron's own mappings: torch.distributed's call and the NCCL launch.
constexpr double kCollective = 1.0;
// An all-to-all of the MoE dispatcher: all_to_all_single with host-side split sizes inside an autograd
// function, plus sort_chunks_by_idxs' split and concatenation when the rank holds several experts.
constexpr double kAllToAll = 3.0;
constexpr double kSortChunks = 2.0;

// Under TE's DelayedScaling an FP8 module call costs the host about twice its BF16 call: TE issue #761
// (2024-04, H100, TE cf6fc89) profiles te.Linear "more than 2x" slower to schedule in FP8 than in BF16,
// with the GPU idle through the FP8 forward; the extra work is the module's FP8 bookkeeping — the
// casts it launches, the scales it caches for the backward and the amax-history update (TE issue
// #836). Current scaling (tensorwise) has no history to keep and is counted as the BF16 call: no
// published figure says more. The other FP8-family precisions (mxfp8, blockwise, nvfp4) likewise.
constexpr double kDelayedScalingModuleFactor = 2.0;

HostOps same(double n, GraphRegion region) { return {n, n, region}; }

/// The TE module calls of a scenario: their host ops, forward and backward.
struct TeModuleOps {
  double forward = kTeModule, backward = kTeModuleBackward;
  explicit TeModuleOps(const Scenario& s) {
    if (s.precision == Precision::kFp8 && s.fp8_recipe == Fp8Recipe::kDelayed) {
      forward *= kDelayedScalingModuleFactor;
      backward *= kDelayedScalingModuleFactor;
    }
  }
  [[nodiscard]] HostOps in(GraphRegion region) const { return {forward, backward, region}; }
};

}  // namespace

HostOps host_ops(std::string_view name, const Scenario& s) {
  using R = GraphRegion;
  const auto& rt = s.runtime;
  const std::int64_t local_experts = s.model.is_moe() ? s.model.num_moe_experts / s.parallel.ep : 0;
  const double experts = static_cast<double>(local_experts);
  const TeModuleOps te(s);
  // --- attention block ---
  // TE's LayerNormColumnParallelLinear runs the input norm inside the QKV projection's module call.
  if (name == "input_norm") return same(0, R::kAttention);
  if (name == "attn_all_gather" || name == "attn_reduce_scatter" || name == "attn_all_reduce") {
    return same(kCollective, R::kAttention);
  }
  // The QKV output is split into q, k, v views (get_query_key_value_tensors: view, split, reshape).
  if (name == "qkv_proj") return {te.forward + 2.0, te.backward + 1.0, R::kAttention};
  if (name == "q_proj" || name == "q_down_proj" || name == "q_up_proj" || name == "kv_down_proj" ||
      name == "kv_up_proj" || name == "attn_out_proj") {
    return te.in(R::kAttention);
  }
  // Fused RoPE (apply_rope_fusion): one TE kernel for q and one for k. Unfused
  // (_apply_rotary_pos_emb_bshd): rotate_half's chunk, negation and concatenation, two products, a sum
  // and the slicing of the rotary part, per tensor.
  if (name == "rotary") return same(rt.has(Fusion::kRope) ? 2.0 : 14.0, R::kAttention);
  // TE DotProductAttention: backend selection and the fused-attention call, a module and a reshape.
  if (name == "core_attention") return {kTeModule + 1.0, kTeModuleBackward + 1.0, R::kAttention};
  if (name == "cp_ring_exchange") return same(2.0 * kCollective, R::kAttention);
  if (name == "cp_out_correction" || name == "cp_grad_correction") return same(2.0, R::kAttention);
  // --- residuals: two bias-dropout-adds per layer (jit-fused) ---
  if (name == "attn_residual" || name == "mlp_residual") return same(2.0, R::kLayer);
  // --- dense MLP and shared experts ---
  // The pre-MLP norm of a dense layer runs inside fc1's LayerNormLinear; an MoE layer's is a TENorm
  // module of its own ahead of the router.
  if (name == "pre_mlp_norm") {
    return s.model.is_moe() ? HostOps{2.0, 3.0, R::kMoeRouter} : same(0, R::kDenseMlp);
  }
  const bool shared = name.starts_with("shared_");
  const R mlp_region = shared ? R::kMoeBlock : R::kDenseMlp;
  if (name == "fc1" || name == "fc2" || name == "shared_fc1" || name == "shared_fc2") return te.in(mlp_region);
  if (name == "mlp_all_gather" || name == "mlp_reduce_scatter" || name == "mlp_all_reduce" ||
      name == "shared_all_gather" || name == "shared_reduce_scatter" || name == "shared_all_reduce") {
    return same(kCollective, mlp_region);
  }
  // bias_activation_fusion: one fused SwiGLU/GeLU kernel; unfused: chunk, SiLU, product (3 ops
  // forward, 4 backward).
  const bool fused_act = rt.has(Fusion::kBiasSwiglu);
  if (name == "activation" || name == "shared_activation") {
    return fused_act ? same(1.0, mlp_region) : HostOps{3.0, 4.0, mlp_region};
  }
  // --- MoE block ---
  // Router (TopKRouter): the gating GEMM in the router's dtype (a cast and a linear).
  if (name == "router") return {2.0, 3.0, R::kMoeRouter};
  // Score function, top-k, routing map and the load-balancing loss with its tracker: fused
  // (moe_router_fusion: TE's fused top-k/softmax and fused aux-loss kernels) against Megatron's unfused
  // path (softmax, topk, scatter into the routing map, then the aux loss's sums, means and products,
  // the MoEAuxLossAutoScaler and the tracker's logging copies).
  if (name == "router_topk") return rt.has(Fusion::kMoeRouter) ? HostOps{6.0, 5.0, R::kMoeRouter} : HostOps{20.0, 14.0, R::kMoeRouter};
  // Dispatcher preprocess: tokens per expert (routing_map.sum), their all-gather over the EP group and
  // the split sizes computed from it (reshape, sums, three device-to-host copies).
  if (name == "activation_offload" || name == "activation_reload") {
    // Megatron's offload manager per offloaded module and pass: the group start and commit autograd
    // functions, the side-stream copy and its event — about four framework ops, outside any CUDA graph
    // (the graph scopes may not contain offloaded modules).
    return same(4.0 * static_cast<double>(s.offload.activations.size()), R::kOutside);
  }
  if (name == "moe_preprocess") return {s.parallel.ep > 1 ? 12.0 : 6.0, 0.0, R::kMoePreprocess};
  // Token permutation: TE's fused moe_permute kernels (moe_permute_fusion) against Megatron's
  // index-based permute (the mask's nonzero indices, argsort, index_select; scatter-add back).
  if (name == "permute") return rt.has(Fusion::kMoePermute) ? same(2.0, R::kMoeBlock) : HostOps{6.0, 4.0, R::kMoeBlock};
  if (name == "unpermute") {
    return rt.has(Fusion::kMoePermute) ? same(2.0, R::kMoeBlock) : HostOps{5.0, 4.0, R::kMoeBlock};
  }
  if (name == "dispatch" || name == "combine") {
    const bool allgather = s.moe.dispatcher == Dispatcher::kAllgather;
    return same(allgather ? kCollective + 1.0 : kAllToAll + (local_experts > 1 ? kSortChunks : 0.0), R::kMoeBlock);
  }
  if (name == "etp_all_gather" || name == "etp_reduce_scatter") return same(kCollective, R::kMoeBlock);
  // Expert GEMMs: TE's GroupedLinear, one module call with a cuBLAS launch per local expert; without
  // moe.grouped_gemm Megatron's SequentialMLP calls one TE Linear per expert.
  if (name == "expert_fc1" || name == "expert_fc2") {
    const double forward = s.moe.grouped_gemm ? te.forward + kGroupedGemmPerExpert * experts : te.forward * experts;
    return {forward, forward * kBackwardOverForward, R::kMoeBlock};
  }
  // The activation of the experts' outputs and the routing-probability product.
  if (name == "expert_activation") {
    const double per_call = (fused_act ? 1.0 : 3.0) + 1.0;
    const double calls = s.moe.grouped_gemm ? 1.0 : experts;
    return {per_call * calls, (per_call + 1.0) * calls, R::kMoeBlock};
  }
  // The launch gaps of SequentialMLP's per-expert kernels: their host side is in the expert GEMMs.
  if (name == "expert_launches") return same(0, R::kMoeBlock);
  // A measured host wait (moe.host_sync_idle_s) is time, not work for the host.
  if (name == "host_sync") return same(0, R::kMoeBlock);
  // --- outside the transformer layers ---
  // Embedding lookup (VocabParallelEmbedding: masking, lookup, masked fill) and its TP reduction.
  if (name == "embedding") return same(4.0, R::kOutside);
  if (name == "embedding_reduce" || name == "head_all_gather" || name == "loss_max_all_reduce" ||
      name == "loss_sum_all_reduce") {
    return same(kCollective, R::kOutside);
  }
  if (name == "final_norm") return {2.0, 3.0, R::kOutside};
  // The output layer (Megatron's ColumnParallelLinear, not a TE module, in 16 bits) and the MTP
  // projection: a module call without FP8 bookkeeping.
  if (name == "lm_head" || name == "mtp_eh_proj") return {kTeModule, kTeModuleBackward, R::kOutside};
  if (name == "mtp_norms") return {4.0, 6.0, R::kOutside};
  // Vocab-parallel cross-entropy: fused (cross_entropy_loss_fusion) against the unfused chain of max,
  // subtraction, exp, sum, division, masking and the loss average (docs: layer_cost.cpp's byte count).
  if (name == "cross_entropy") {
    return rt.has(Fusion::kCrossEntropy) ? HostOps{3.0, 2.0, R::kOutside} : HostOps{12.0, 8.0, R::kOutside};
  }
  throw InternalError("program/host_ops: no host figures for op '" + std::string(name) + "'");
}

namespace {

bool captured(GraphRegion region, const RuntimeSpec& rt) {
  if (rt.full_iteration_graph()) return true;
  switch (region) {
    case GraphRegion::kAttention: return rt.captures(CudaGraphScope::kLayer) || rt.captures(CudaGraphScope::kAttn);
    case GraphRegion::kDenseMlp: return rt.captures(CudaGraphScope::kLayer) || rt.captures(CudaGraphScope::kMlp);
    case GraphRegion::kMoeRouter:
      return rt.captures(CudaGraphScope::kLayer) || rt.captures(CudaGraphScope::kMoe) ||
             rt.captures(CudaGraphScope::kMoeRouter);
    case GraphRegion::kMoePreprocess:
      return rt.captures(CudaGraphScope::kLayer) || rt.captures(CudaGraphScope::kMoe) ||
             rt.captures(CudaGraphScope::kMoePreprocess);
    case GraphRegion::kMoeBlock: return rt.captures(CudaGraphScope::kLayer) || rt.captures(CudaGraphScope::kMoe);
    case GraphRegion::kLayer: return rt.captures(CudaGraphScope::kLayer);
    case GraphRegion::kOutside: return false;
  }
  return false;
}

/// Captured ops that replay as one graph: a whole-layer graph holds every region of the layer, a MoE
/// graph router, preprocess and block together; other scopes are one graph each.
int graph_of(GraphRegion region, const RuntimeSpec& rt) {
  if (rt.captures(CudaGraphScope::kLayer) && region != GraphRegion::kOutside) return 100;
  const bool moe_part =
      region == GraphRegion::kMoeRouter || region == GraphRegion::kMoePreprocess || region == GraphRegion::kMoeBlock;
  if (rt.captures(CudaGraphScope::kMoe) && moe_part) return 101;
  return static_cast<int>(region);
}

void price_pass(std::vector<LayerOp>& ops, const Scenario& s, double op_s) {
  const RuntimeSpec& rt = s.runtime;
  // The dropless dispatcher reads the token counts back (Megatron token_dispatcher.py: cuda_sync_point
  // "before_ep_alltoall" with EP, else before the grouped GEMM needs its host-side split sizes); a
  // full-iteration graph runs the sync-free path (docs/accuracy.md, Round 7).
  const bool syncs = s.model.is_moe() && s.moe.reads_token_counts_back() && !rt.full_iteration_graph();
  const std::string_view sync_op =
      s.parallel.ep > 1 && s.moe.dispatcher != Dispatcher::kAllgather ? "dispatch" : "expert_fc1";
  int open_graph = -1;  // the captured graph the previous op belonged to
  for (LayerOp& op : ops) {
    const bool forward_work = op.phase == OpPhase::kForward || op.phase == OpPhase::kRecompute;
    op.host_sync = syncs && forward_work && op.name == sync_op;
    if (rt.full_iteration_graph()) {
      op.host_s = 0;  // one launch per step
      continue;
    }
    const HostOps h = host_ops(op.name, s);
    if (captured(h.region, rt)) {
      const int graph = graph_of(h.region, rt);
      // One replay (the graphed callable's Python and cudaGraphLaunch) per captured run of ops.
      op.host_s = graph == open_graph ? 0.0 : op_s;
      open_graph = graph;
      continue;
    }
    open_graph = -1;
    // A GEMM's backward is one autograd node: its data-gradient op carries it, the weight gradient none.
    const double n = forward_work ? h.forward : (op.phase == OpPhase::kWgrad ? 0.0 : h.backward);
    op.host_s = n * op_s;
  }
}

}  // namespace

void price_host(OpProgram& p, const Scenario& s) {
  const double op_s = s.host_op_seconds();
  price_pass(p.forward, s, op_s);
  price_pass(p.backward, s, op_s);
}

}  // namespace moesim::program
