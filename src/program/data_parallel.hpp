#pragma once
#include <cstdint>
// Data-parallel gradient and parameter traffic, and the optimizer step, as Megatron-Core's DDP and
// distributed optimizer run them. Shared by both fidelities so that they charge the same bytes.
#include "compute/kernel_cost.hpp"
#include "scenario/scenario.hpp"
#include "schedule/stage_params.hpp"
#include "schedule/step_shape.hpp"

namespace moesim::program {

/// Megatron DDP bucket: max(40 M, 1 M × dp) parameters (distributed_data_parallel_config.py,
/// bucket_size default).
[[nodiscard]] double ddp_bucket_params(double dp_ranks);

/// Bytes per parameter of the gradient reduction. Megatron reduces bf16 gradients in fp32
/// (arguments.py forces accumulate_allreduce_grads_in_fp32 for bf16) unless the scenario turns
/// optimizer.grad_reduce_in_fp32 off (then bf16, 2 bytes); fp16 runs reduce fp16.
[[nodiscard]] double grad_reduce_bytes_per_param(const Scenario& s);

/// Bytes per parameter of the distributed optimizer's parameter all-gather (16-bit weights).
inline constexpr double kParamGatherBytesPerParam = 2.0;
/// Bytes per parameter of the distributed optimizer's parameter all-gather: 16-bit, or 1 byte with
/// --fp8-param-gather in per-tensor or blockwise FP8 (MXFP8 gathers 16-bit weights; Megatron MoE
/// README), or 0.5625 bytes with --fp4-param-gather in NVFP4. The 16-bit embedding and norms are
/// counted at the low-precision size too: a small share of any layer.
[[nodiscard]] double param_gather_bytes_per_param(const Scenario& s);

/// EPLB replicas (scenario moe.placement): after the expert-DP reduction the copies of a replicated
/// expert must sum their gradients, or they would step apart. Of every expert gradient a rank
/// reduces, this share is all-reduced once more with another copy's rank: the redundant slots'
/// share of the rank's expert slots, N / (E + N), and of that only the rank's shard (1 / edp) under
/// the distributed optimizer, whose reduce-scatter left each rank one. 0 without replicas.
[[nodiscard]] double replica_gradient_share(const Scenario& s);
/// Two copies of an expert sit on different EP ranks: in one NVLink domain when the EP group is in
/// one, else (the balancer spreads replicas over the whole group) in two.
[[nodiscard]] collective::GroupPlacement replica_group(const schedule::GroupLayout& g);

/// A stage's DP traffic against the compute it may hide behind. `seconds`: the whole stage's
/// reduction (or gather) on the serial DP stream; `buckets`: how many DDP buckets it is cut into;
/// `chunks`: model chunks per stage (vpp) of a `pp`-stage pipeline; `pass_seconds`: one micro-batch's
/// backward (or forward) through all chunks of the stage.
struct DpOverlapWindow {
  double seconds = 0, buckets = 1;
  std::int64_t chunks = 1, pp = 1;
  double pass_seconds = 0;
};

/// Exposed seconds of the gradient reduction with overlap_grad_reduce. Megatron launches a chunk's
/// buckets as its last micro-batch's backward fills them (schedules.py, the interleaved schedule
/// syncs each model chunk after its last micro-batch). In the last group of the interleaved
/// schedule chunk k's last backward ends k·pp chunk passes before the step's backward does, so its
/// reduction hides behind everything after; the chunks' reductions queue on one stream. With one
/// chunk this is max(seconds / buckets, seconds − pass_seconds).
[[nodiscard]] double exposed_grad_reduction(const DpOverlapWindow& w);

/// Exposed seconds of the parameter all-gather with overlap_param_gather: chunk k's first forward
/// waits for its first bucket and cannot finish before its last; the warm-up then runs that chunk's
/// other pp − 1 micro-batches before chunk k + 1 needs its weights. With one chunk this is
/// max(seconds / buckets, seconds − pass_seconds).
[[nodiscard]] double exposed_param_gather(const DpOverlapWindow& w);

/// The Adam step over the parameters this rank owns (all of them, or its DP shard with the
/// distributed optimizer): a memory-bound pass.
[[nodiscard]] double optimizer_step_seconds(const Scenario& s, const compute::KernelCostModel& kernels,
                                            const schedule::RankParams& params);

}  // namespace moesim::program
