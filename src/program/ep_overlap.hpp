#pragma once
// Combined 1F1B (moe.a2a_overlap; Megatron --overlap-moe-expert-parallel-comm, Megatron-Core
// docs/user-guide/features/moe_a2a_overlap.md and core/pipeline_parallel/combined_1f1b.py). In the
// steady state Megatron runs the forward of one micro-batch and the backward of another together,
// layer by layer, in four phases that each pair one pass's all-to-all with the other's compute:
//
//   forward:  attention (A_F)   | dispatch (D_F) | experts (M_F)  | combine (C_F)
//   backward: combine (C_B)     | experts (M_B)  | dispatch (D_B) | attention (A_B)
//
// A phase takes max(compute, all-to-all) instead of their sum, so a paired layer hides
//   min(A_F, C_B) + min(D_F, M_B) + min(M_F, D_B) + min(C_F, A_B)
// seconds of all-to-all (each all-to-all's size-independent latency stays exposed), less what the
// dispatch kernels' SMs slow the compute beside them (dispatcher_sm_share).
#include <cstdint>
#include <vector>

#include "program/layer_cost.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace moesim::program {

/// Seconds each all-to-all of one MoE layer hides when its pass runs paired with another pass of the
/// same layer kind. Zero for a layer without expert-parallel all-to-alls.
struct EpPairSaving {
  double dispatch_forward = 0, combine_forward = 0, dispatch_backward = 0, combine_backward = 0;
  [[nodiscard]] double forward() const { return dispatch_forward + combine_forward; }
  [[nodiscard]] double backward() const { return dispatch_backward + combine_backward; }
};

/// `comm_sm_share`: the share of the GPU's SMs the dispatch kernels hold while they run; the compute
/// they overlap runs on the rest, so a phase of compute c beside all-to-all e hides min(c, (1 − share)·e).
[[nodiscard]] EpPairSaving ep_pair_saving(const OpProgram& moe_layer, double comm_sm_share);

/// moe.dispatcher_sms (or Megatron-Core's default for the dispatcher: DeepEP 20, HybridEP 24) over
/// the GPU's SMs; for NCCL's all-to-all, its point-to-point channels (one CTA each) over the SMs.
[[nodiscard]] double dispatcher_sm_share(const Scenario& s);

/// The seconds `op` (an op of a layer whose saving is `saving`) hides in a paired pass: its share for
/// the EP dispatch and combine, 0 for every other op.
[[nodiscard]] double ep_hidden_seconds(const EpPairSaving& saving, const LayerOp& op);

/// For each pass of a rank's order, the index of the pass Megatron runs it combined with, or -1.
/// Neighbouring passes of opposite direction pair up when they belong to different micro-batches
/// (a micro-batch's backward needs its own forward done): without pipelining F0 runs alone, then
/// (B0, F1), (B1, F2), ..., and B(m-1) alone; with the interleaved schedule the warm-up forwards
/// and the cool-down backwards run alone.
[[nodiscard]] std::vector<std::int32_t> combined_partners(const std::vector<schedule::PipelinePass>& order);

/// The number of combined pairs in the order.
[[nodiscard]] std::int64_t combined_pairs(const std::vector<schedule::PipelinePass>& order);

}  // namespace moesim::program
