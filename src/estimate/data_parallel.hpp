#pragma once
// Data-parallel gradient and parameter traffic, and the optimizer step, as Megatron-Core's DDP and
// distributed optimizer run them. Shared by both fidelities so that they charge the same bytes.
#include "compute/kernel_cost.hpp"
#include "scenario/scenario.hpp"
#include "schedule/stage_params.hpp"

namespace moesim::estimate {

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

/// The Adam step over the parameters this rank owns (all of them, or its DP shard with the
/// distributed optimizer): a memory-bound pass.
[[nodiscard]] double optimizer_step_seconds(const Scenario& s, const compute::KernelCostModel& kernels,
                                            const schedule::RankParams& params);

}  // namespace moesim::estimate
