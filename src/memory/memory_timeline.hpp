#pragma once
// Memory of one rank of a pipeline stage over the training step, op by op: the rank runs Megatron's
// pass order (schedule::pipeline_order); within a pass, layer by layer, a forward leaves the layer's
// saved activations (layer_activation) and the matching backward frees them, and each op holds its
// one-at-a-time buffers while it runs. The static terms of rank_memory (model state, NCCL buffers,
// CUDA context) are the baseline; fragmentation is the same share of what is allocated as there.
// docs/memory.md ("Memory over the step") says how this peak relates to rank_memory's total.
#include <cstdint>
#include <string>
#include <vector>

#include "memory/rank_memory.hpp"
#include "scenario/scenario.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::memory {

enum class TimelineOpKind : std::uint8_t {
  kEmbedding,   ///< input embedding (stage 0, chunk 0)
  kLayer,       ///< one transformer layer
  kMtp,         ///< one multi-token-prediction module (last stage, last chunk)
  kOutputHead,  ///< LM head and loss (last stage, last chunk)
};

/// One op of the step: one layer (or embedding, MTP module, output head) of one pass.
struct TimelineOp {
  std::int64_t pass = 0;  ///< position in schedule::pipeline_order of the stage's rank
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;  ///< virtual chunk on the rank
  bool backward = false;
  TimelineOpKind kind = TimelineOpKind::kLayer;
  std::int64_t layer = -1;  ///< model layer index (kLayer) or MTP depth (kMtp); -1 otherwise
  bool moe = false;         ///< the layer (or the MTP module's layer) is an MoE layer
  friend bool operator==(const TimelineOp&, const TimelineOp&) = default;
};

struct TimelinePoint {
  TimelineOp op;
  double running_bytes = 0;  ///< resident while the op runs: live saved activations + the op's buffers
  double bytes = 0;          ///< resident after the op
};

struct MemoryTimeline {
  std::int64_t stage = 0;
  double baseline_bytes = 0;  ///< static terms before the first and after the last op
  std::vector<TimelinePoint> points;
  std::size_t peak_index = 0;  ///< first point whose running_bytes is the largest
  [[nodiscard]] double peak_bytes() const { return points.empty() ? baseline_bytes : points[peak_index].running_bytes; }
};

/// The whole timeline of one rank of `pipeline_stage` (layers `stage`): one point per op, in order.
/// O(micro-batches · vpp · layers of the stage) points; for the peak alone use timeline_peak.
[[nodiscard]] MemoryTimeline memory_timeline(const Scenario& s, std::int64_t pipeline_stage,
                                             const schedule::StageLayers& stage, const MemoryOptions& opt = {});

/// The timeline's peak and the first op at which it happens, without building the timeline:
/// O(pp·vpp + layers of the stage), the same value and op as memory_timeline's peak.
struct TimelinePeak {
  double bytes = 0;
  TimelineOp op;
};
[[nodiscard]] TimelinePeak timeline_peak(const Scenario& s, std::int64_t pipeline_stage,
                                         const schedule::StageLayers& stage, const MemoryOptions& opt = {});
/// The same when the caller has the stage's rank_memory already (its static terms are the baseline).
[[nodiscard]] TimelinePeak timeline_peak(const Scenario& s, std::int64_t pipeline_stage,
                                         const schedule::StageLayers& stage, const RankMemory& static_terms,
                                         const MemoryOptions& opt = {});

/// "forward of micro-batch 7, chunk 1, layer 12 (MoE)": micro-batches, chunks and layers count from 0.
[[nodiscard]] std::string describe(const TimelineOp& op);
/// "embedding", "layer 12 (MoE)", "MTP module 0 (dense)", "output head and loss".
[[nodiscard]] std::string describe_kind(const TimelineOp& op);

}  // namespace moesim::memory
