#pragma once
// The ops one forward pass of a virtual chunk runs on a stage's rank, with what each saves for the
// backward and the buffers it holds while running: the one definition that memory_timeline (every
// op) and timeline_peak (per-chunk summaries) both walk. Private to src/memory.
#include <array>
#include <cstdint>

#include "memory/memory_timeline.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace moesim::memory::detail {

/// What an op leaves saved for its backward, by kind: saved bytes are counts × bytes per kind, so
/// equal states give bit-identical bytes however they were reached (no drift over thousands of
/// adds and frees; the timeline returns exactly to its baseline).
enum SavedKind : std::uint8_t { kSavedDense, kSavedMoe, kSavedEmbedding, kSavedMtp, kSavedKinds, kSavedNone = kSavedKinds };

struct Live {
  /// Counts per kind, held as doubles: whole numbers far below 2^53 stay exact, and the hot loops
  /// then need no integer-to-double conversion.
  std::array<double, kSavedKinds> n{};
  void add(SavedKind k, double times) {
    if (k != kSavedNone) n[k] += times;
  }
  Live& operator+=(const Live& o) {
    for (std::size_t i = 0; i < n.size(); ++i) n[i] += o.n[i];
    return *this;
  }
  friend Live operator+(Live a, const Live& b) { return a += b; }
  friend Live operator-(Live a, const Live& b) {
    for (std::size_t i = 0; i < a.n.size(); ++i) a.n[i] -= b.n[i];
    return a;
  }
  friend Live operator*(Live a, std::int64_t k) {
    for (auto& v : a.n) v *= static_cast<double>(k);
    return a;
  }
};

struct StageOp {
  TimelineOpKind kind = TimelineOpKind::kLayer;
  std::int64_t layer = -1;
  bool moe = false;
  SavedKind saved = kSavedNone;
  double forward_work = 0;   ///< one-at-a-time bytes while its forward runs
  double backward_work = 0;  ///< the same for its backward
};

/// Everything the ops of a stage need, computed once per stage.
struct StageContext {
  const Scenario* s = nullptr;
  const schedule::StageLayers* stage = nullptr;
  std::array<double, kSavedKinds> unit{};  ///< saved bytes per count of each kind (one micro-batch)
  StageOp dense, moe;                      ///< a layer of each kind (layer index filled per op)
  double logits = 0;
  // Static terms of rank_memory: resident = model state + a + comm + context + fragmentation_share · a,
  // with a = live saved activations + the running op's buffers (rank_memory's formula).
  double model_state = 0, comm = 0, context = 0, fragmentation_share = 0;

  [[nodiscard]] double resident(const Live& live, double work) const {
    double saved = 0;
    for (std::size_t i = 0; i < unit.size(); ++i) saved += live.n[i] * unit[i];
    const double a = saved + work;
    return model_state + a + comm + context + fragmentation_share * a;
  }
};

[[nodiscard]] StageContext stage_context(const Scenario& s, const schedule::StageLayers& stage,
                                         const RankMemory& static_terms, const MemoryOptions& opt);

/// Calls f(op) for the ops of one forward pass of `chunk`, in forward order (a backward runs them
/// reversed): the embedding (stage 0, chunk 0), the chunk's layers, then on the last stage's last
/// chunk the MTP modules and the output head (Megatron's GPTModel.forward order).
template <class F>
void for_each_op(const StageContext& ctx, std::int64_t chunk, F&& f) {
  const Scenario& s = *ctx.s;
  const schedule::StageLayers& st = *ctx.stage;
  const std::int64_t vpp = s.parallel.vpp;
  // A hand-made plan without chunks (vpp 1) lists its layers only (as rank_memory accepts).
  const std::vector<std::int64_t>& layers =
      static_cast<std::int64_t>(st.chunks.size()) == vpp ? st.chunks[static_cast<std::size_t>(chunk)] : st.layers;
  if (st.has_embedding && chunk == 0) f(StageOp{TimelineOpKind::kEmbedding, -1, false, kSavedEmbedding, 0, 0});
  for (std::int64_t l : layers) {
    StageOp op = s.model.layer_is_moe(l) ? ctx.moe : ctx.dense;
    op.layer = l;
    f(op);
  }
  if (st.has_output_head && chunk == vpp - 1) {
    const StageOp& last = s.model.layer_is_moe(s.model.num_layers - 1) ? ctx.moe : ctx.dense;
    for (std::int64_t d = 0; d < s.model.mtp_num_layers; ++d) {
      f(StageOp{TimelineOpKind::kMtp, d, last.moe, kSavedMtp, last.forward_work, last.backward_work});
    }
    f(StageOp{TimelineOpKind::kOutputHead, -1, false, kSavedNone, ctx.logits, ctx.logits});
  }
}

/// The TimelineOp of `op` run in pass `pass` (p: micro-batch, chunk, direction).
[[nodiscard]] inline TimelineOp timeline_op(const StageOp& op, std::int64_t pass, const schedule::PipelinePass& p) {
  return {pass, p.microbatch, p.chunk, p.backward, op.kind, op.layer, op.moe};
}

}  // namespace moesim::memory::detail
