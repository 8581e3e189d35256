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
/// (arguments.py forces accumulate_allreduce_grads_in_fp32 for bf16); fp16 runs reduce fp16.
[[nodiscard]] double grad_reduce_bytes_per_param(const Scenario& s);

/// Bytes per parameter of the distributed optimizer's parameter all-gather (16-bit weights).
inline constexpr double kParamGatherBytesPerParam = 2.0;

/// The Adam step over the parameters this rank owns (all of them, or its DP shard with the
/// distributed optimizer): a memory-bound pass.
[[nodiscard]] double optimizer_step_seconds(const Scenario& s, const compute::KernelCostModel& kernels,
                                            const schedule::RankParams& params);

}  // namespace moesim::estimate
