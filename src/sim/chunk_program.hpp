#pragma once
// The ops one pipeline rank runs for one micro-batch through one of its model chunks, forward and
// backward, in order, with the points in the backward where a unit's weight gradients are complete
// (where Megatron's DDP hooks may launch a gradient bucket's reduction).
#include <cstdint>
#include <vector>

#include "program/layer_cost.hpp"
#include "schedule/stage_params.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::sim {

/// After backward op `after_op` completes, `params` more weight gradients of the chunk are final.
struct GradientsReady {
  std::size_t after_op = 0;
  schedule::RankParams params;
};

struct ChunkProgram {
  std::vector<program::LayerOp> forward;
  std::vector<program::LayerOp> backward;
  /// For ops whose cost follows the rank's expert load — the expert block's kernels (named
  /// expert_*) and the all-to-all dispatch and combine — the routing layer whose loads they use (the transformer
  /// layer; MTP layers count on from num_layers); -1 for every other op.
  std::vector<std::int32_t> forward_load_layer, backward_load_layer;
  /// moe.a2a_overlap: seconds each op hides when its pass runs combined with another
  /// (program/ep_overlap.hpp; non-zero only for the EP dispatch and combine). Empty without it.
  std::vector<double> forward_ep_hidden, backward_ep_hidden;
  /// Backward ops after which gradients become ready (a unit's last backward op), as flags.
  std::vector<bool> backward_marks;
  std::vector<GradientsReady> gradients_ready;  ///< in backward order
  schedule::RankParams params;                  ///< all weights of the chunk on this rank
};

/// Programs of every chunk of one pipeline rank (stage.chunks.size() entries). Units of one kind
/// (dense/MoE layer with the same attention span) are costed once per call.
[[nodiscard]] std::vector<ChunkProgram> build_chunk_programs(const Scenario& s, const program::LayerCostModel& costs,
                                                             const schedule::StageLayers& stage);

}  // namespace moesim::sim
