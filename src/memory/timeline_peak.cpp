// The timeline's peak without the timeline: every result fills StageMemory::peak_op with it, so it
// must cost about what rank_memory costs, not O(micro-batches · layers).
#include <algorithm>
#include <vector>

#include "memory/memory_timeline.hpp"
#include "memory/pass_walk.hpp"
#include "memory/stage_ops.hpp"

namespace moesim::memory {
namespace {

/// The op of a chunk's pass that holds the most while running, relative to the live state before
/// the pass (adding the same live state to every op of the pass keeps the order). Ties go to the op
/// that runs first, as in memory_timeline.
struct PassBest {
  bool exists = false;
  detail::StageOp op;
  detail::Live live;  ///< live counts while it runs, relative to before the pass
  double work = 0;
  double rel = 0;     ///< saved bytes of `live` + work: the op's height above the pass's start
};

struct ChunkSummary {
  detail::Live adds;      ///< what a forward of the chunk leaves saved
  double adds_bytes = 0;  ///< the same in bytes
  PassBest forward, backward;
};

double saved_bytes(const detail::StageContext& ctx, const detail::Live& live) {
  double b = 0;
  for (std::size_t i = 0; i < ctx.unit.size(); ++i) b += live.n[i] * ctx.unit[i];
  return b;
}

ChunkSummary summarize(const detail::StageContext& ctx, std::int64_t chunk) {
  // First sweep: which op of a forward and of a backward holds the most. Heights relative to the
  // pass's start are running sums here (they only rank the ops of one pass); the walk recomputes
  // the chosen op's bytes exactly from the counts. While backward op i runs, the ops after it are
  // freed and it is not: its height is (saved up to and with i) + work − the chunk's total, so the
  // same running sum ranks it.
  double height = 0, best_f = 0, best_b = 0;
  std::int64_t i = 0, at_f = -1, at_b = -1;
  detail::for_each_op(ctx, chunk, [&](const detail::StageOp& op) {
    if (op.saved != detail::kSavedNone) height += ctx.unit[op.saved];
    if (at_f < 0 || height + op.forward_work > best_f) {
      best_f = height + op.forward_work;
      at_f = i;
    }
    // >=: of two equal ops, the later in forward order runs first in the backward.
    if (at_b < 0 || height + op.backward_work >= best_b) {
      best_b = height + op.backward_work;
      at_b = i;
    }
    ++i;
  });
  ChunkSummary c;
  c.adds_bytes = height;
  if (i == 0) return c;  // an empty chunk runs no op
  // Second sweep: the counts, and the two ops themselves.
  detail::Live prefix;
  i = 0;
  detail::for_each_op(ctx, chunk, [&](const detail::StageOp& op) {
    prefix.add(op.saved, 1);
    if (i == at_f) c.forward = {true, op, prefix, op.forward_work, best_f};
    if (i == at_b) c.backward = {true, op, prefix, op.backward_work, best_b - height};
    ++i;
  });
  c.adds = prefix;
  c.backward.live = c.backward.live - c.adds;
  return c;
}

/// Walks the pass order in runs (detail::walk_runs) keeping the live counts exactly and their
/// bytes approximately (a running sum): the sum only screens candidates; the exact value comes from
/// the counts, computed as memory_timeline computes it, so the same op wins with the same bytes.
/// Within a run every candidate moves by the same amount per step, so only the run's first and last
/// steps can hold its maximum; visiting them in order keeps "the first op that reaches the peak".
class PeakWalk {
 public:
  PeakWalk(const detail::StageContext& ctx, const std::vector<ChunkSummary>& chunks) : ctx_(ctx), chunks_(chunks) {
    for (const ChunkSummary& c : chunks) {
      if (c.backward.exists) max_backward_rel_ = std::max(max_backward_rel_, c.backward.rel);
    }
  }
  void forwards(std::int64_t pass, std::int64_t n, const schedule::PipelinePass& p) {
    const ChunkSummary& c = chunk(p);
    at_ends(n, [&](std::int64_t k) {
      consider(c.forward, live_ + c.adds * k, approx_ + c.adds_bytes * as_d(k), pass + k, at(p, k));
    });
    live_ += c.adds * n;
    approx_ += c.adds_bytes * as_d(n);
  }
  void pairs(std::int64_t pass, std::int64_t n, const schedule::PipelinePass& f, const schedule::PipelinePass& b) {
    const ChunkSummary& cf = chunk(f);
    const ChunkSummary& cb = chunk(b);
    const detail::Live step = cf.adds - cb.adds;
    const double step_bytes = cf.adds_bytes - cb.adds_bytes;
    at_ends(n, [&](std::int64_t k) {
      const detail::Live live = live_ + step * k;
      const double approx = approx_ + step_bytes * as_d(k);
      consider(cf.forward, live, approx, pass + 2 * k, at(f, k));
      consider(cb.backward, live + cf.adds, approx + cf.adds_bytes, pass + 2 * k + 1, at(b, k));
    });
    live_ += step * n;
    approx_ += step_bytes * as_d(n);
  }
  void backwards(std::int64_t pass, std::int64_t n, const schedule::PipelinePass& b) {
    // Levels fall through a cool-down run: its first backward holds the most.
    const ChunkSummary& c = chunk(b);
    consider(c.backward, live_, approx_, pass, b);
    live_ = live_ - c.adds * n;
    approx_ -= c.adds_bytes * as_d(n);
  }
  void steady() {
    steady_live_ = live_;
    steady_approx_ = approx_;
  }
  void rewind() {
    live_ = steady_live_;
    approx_ = steady_approx_;
  }
  /// In the cool-down levels only fall: once no backward can reach the peak, the rest cannot either.
  [[nodiscard]] bool done() const { return found_ && approx_ + max_backward_rel_ < screen(); }
  [[nodiscard]] const TimelinePeak& best() const { return best_; }
  [[nodiscard]] bool found() const { return found_; }

 private:
  static double as_d(std::int64_t v) { return static_cast<double>(v); }
  static schedule::PipelinePass at(schedule::PipelinePass p, std::int64_t k) {
    p.microbatch += static_cast<std::int32_t>(k);
    return p;
  }
  /// f(k) for the run's first and last steps, in that order (once when n = 1).
  template <class F>
  static void at_ends(std::int64_t n, F&& f) {
    f(0);
    if (n > 1) f(n - 1);
  }
  const ChunkSummary& chunk(const schedule::PipelinePass& p) const { return chunks_[static_cast<std::size_t>(p.chunk)]; }

  /// Below screen() a candidate cannot beat the best: the running sum's rounding is far below 1e-9
  /// of the level.
  [[nodiscard]] double screen() const { return screen_; }

  void consider(const PassBest& b, const detail::Live& live, double approx, std::int64_t pass,
                const schedule::PipelinePass& p) {
    if (!b.exists || (found_ && approx + b.rel < screen_)) return;
    const detail::Live at_op = live + b.live;
    const double v = ctx_.resident(at_op, b.work);
    if (!found_ || v > best_.bytes) {
      found_ = true;
      best_ = {v, detail::timeline_op(b.op, pass, p)};
      const double height = saved_bytes(ctx_, at_op) + b.work;
      screen_ = height - 1e-9 * (height > 0 ? height : -height);
    }
  }

  const detail::StageContext& ctx_;
  const std::vector<ChunkSummary>& chunks_;
  detail::Live live_{}, steady_live_{};
  double approx_ = 0, steady_approx_ = 0;
  double max_backward_rel_ = 0;
  TimelinePeak best_{};
  double screen_ = 0;  ///< just below the best op's saved bytes + work
  bool found_ = false;
};

}  // namespace

TimelinePeak timeline_peak(const Scenario& s, std::int64_t pipeline_stage, const schedule::StageLayers& stage,
                           const MemoryOptions& opt) {
  return timeline_peak(s, pipeline_stage, stage, rank_memory(s, pipeline_stage, stage, opt), opt);
}

TimelinePeak timeline_peak(const Scenario& s, std::int64_t pipeline_stage, const schedule::StageLayers& stage,
                           const RankMemory& static_terms, const MemoryOptions& opt) {
  const detail::StageContext ctx = detail::stage_context(s, stage, static_terms, opt);
  const auto& p = s.parallel;
  std::vector<ChunkSummary> chunks;
  chunks.reserve(static_cast<std::size_t>(p.vpp));
  for (std::int64_t c = 0; c < p.vpp; ++c) chunks.push_back(summarize(ctx, c));

  PeakWalk walk(ctx, chunks);
  // The cool-down's levels fall, but a backward's own buffers (a layer rebuilt by full recompute)
  // can still set the peak there, so it is walked until no backward can.
  detail::walk_runs(pipeline_stage, p.pp, p.vpp, s.num_microbatches(), /*cooldown=*/true, walk);
  if (!walk.found()) return {ctx.resident(detail::Live{}, 0.0), {}};
  return walk.best();
}

}  // namespace moesim::memory
