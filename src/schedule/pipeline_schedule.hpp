#pragma once
// The order in which one pipeline rank runs the forward and backward passes of its micro-batches:
// Megatron-Core's 1F1B (PipeDream-Flush) and interleaved 1F1B with virtual pipeline chunks
// (megatron/core/pipeline_parallel/schedules.py). Pure order, no timing.
#include <algorithm>
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

/// Steps through Megatron's schedule table (below) entry by entry, without the divisions of
/// table_pass: the memory walks visit thousands of passes per planner candidate.
class TableCursor {
 public:
  /// Positioned at entry `index` (0 <= index <= microbatches·vpp; the end may not be read).
  TableCursor(std::int64_t index, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches);
  /// The entry as a forward pass, or as a backward pass (chunk reversed).
  [[nodiscard]] PipelinePass pass(bool backward) const {
    return {static_cast<std::int32_t>(first_ + offset_),
            static_cast<std::int32_t>(backward ? vpp_ - 1 - chunk_ : chunk_), backward};
  }
  /// Entries left in the current run of one chunk (the rest of a group's micro-batches): the
  /// memory walks handle a run at once, as its levels change linearly.
  [[nodiscard]] std::int64_t run_left() const { return size_ - offset_; }
  /// Moves n entries on, 1 <= n <= run_left().
  void advance(std::int64_t n) {
    offset_ += n - 1;
    next();
  }
  void next() {
    if (++offset_ < size_) return;
    offset_ = 0;
    if (++chunk_ < vpp_) return;
    chunk_ = 0;
    first_ += pp_;
    size_ = std::min(pp_, microbatches_ - first_);
  }

 private:
  std::int64_t pp_, vpp_, microbatches_;
  std::int64_t first_ = 0;   ///< first micro-batch of the current group
  std::int64_t size_ = 0;    ///< micro-batches in the current group (pp, or the remainder)
  std::int64_t chunk_ = 0;
  std::int64_t offset_ = 0;  ///< micro-batch within the group
};

/// Passes of pipeline rank `rank` (0 ≤ rank < pp) for `microbatches` micro-batches over `vpp` chunks,
/// in the order Megatron runs them: warm-up forwards, steady one-forward-one-backward, cool-down
/// backwards. With vpp > 1, micro-batches go through the chunks in groups of pp (Megatron's
/// microbatch_group_size_per_vp_stage default), the last group possibly smaller; warm-up is
/// (pp − rank − 1)·2 + (vpp − 1)·pp passes, capped by the total. A scenario only runs full groups:
/// a shorter last group can deadlock, and validate_layout refuses it as Megatron-Core does.
[[nodiscard]] std::vector<PipelinePass> pipeline_order(std::int64_t rank, std::int64_t pp, std::int64_t vpp,
                                                       std::int64_t microbatches);

/// Forward passes rank `rank` runs before its first backward (Megatron's num_warmup_microbatches,
/// capped by the micro-batch·chunk total): pipeline_order starts with these, then alternates.
[[nodiscard]] std::int64_t warmup_passes(std::int64_t rank, std::int64_t pp, std::int64_t vpp,
                                         std::int64_t microbatches);

/// The `index`-th forward (or backward) pass of Megatron's schedule table, the same on every rank:
/// pipeline_order runs forwards in table order and backwards in table order with the chunks
/// reversed. O(1), no allocation, so memory walks can jump through the order without building it.
[[nodiscard]] PipelinePass table_pass(std::int64_t index, bool backward, std::int64_t pp, std::int64_t vpp,
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
