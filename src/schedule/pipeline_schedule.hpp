#pragma once
// The order in which one pipeline rank runs the forward and backward passes of its micro-batches:
// Megatron-Core's 1F1B (PipeDream-Flush) and interleaved 1F1B with virtual pipeline chunks
// (megatron/core/pipeline_parallel/schedules.py). Pure order, no timing.
#include <cstdint>
#include <vector>

namespace moesim::schedule {

/// One forward or backward pass of one micro-batch through one model chunk of a rank.
struct PipelinePass {
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;  ///< virtual chunk on this rank, 0 ≤ chunk < vpp (model chunk chunk·pp + rank)
  bool backward = false;
  friend bool operator==(const PipelinePass&, const PipelinePass&) = default;
};

/// Passes of pipeline rank `rank` (0 ≤ rank < pp) for `microbatches` micro-batches over `vpp` chunks,
/// in the order Megatron runs them: warm-up forwards, steady one-forward-one-backward, cool-down
/// backwards. With vpp > 1, micro-batches go through the chunks in groups of pp (Megatron's
/// microbatch_group_size_per_vp_stage default), the last group possibly smaller; warm-up is
/// (pp − rank − 1)·2 + (vpp − 1)·pp passes, capped by the total.
[[nodiscard]] std::vector<PipelinePass> pipeline_order(std::int64_t rank, std::int64_t pp, std::int64_t vpp,
                                                       std::int64_t microbatches);

/// The pass whose output this pass needs from another pipeline rank (activation for a forward,
/// gradient for a backward), or none (first chunk's forward on rank 0; last chunk's backward on the
/// last rank, which starts from the loss).
struct PassSource {
  bool exists = false;
  std::int64_t rank = 0;
  PipelinePass pass;
};
[[nodiscard]] PassSource pass_source(const PipelinePass& p, std::int64_t rank, std::int64_t pp, std::int64_t vpp);

}  // namespace moesim::schedule
