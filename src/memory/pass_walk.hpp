#pragma once
// Walks one pipeline rank's pass order (schedule::pipeline_order) without building it, in runs of
// passes whose memory levels change linearly, skipping the steady state's repeating periods.
// rank_memory and the timeline's peak both use it, so their cost grows with pp·vpp, not with the
// number of micro-batches. Private to src/memory.
#include <algorithm>
#include <cstdint>

#include "schedule/pipeline_schedule.hpp"

namespace moesim::memory::detail {

/// Calls, in Megatron's order:
/// - v.forwards(pass, n, p): n warm-up forwards of chunk p.chunk, micro-batches p.microbatch + k at
///   passes pass + k (k < n);
/// - v.pairs(pass, n, f, b): n steady steps, step k a forward (f.microbatch + k, f.chunk) at pass
///   pass + 2k and a backward (b.microbatch + k, b.chunk) at pass + 2k + 1;
/// - with `cooldown`, v.backwards(pass, n, b): n cool-down backwards of chunk b.chunk at pass + k,
///   until v.done() says no later one can matter.
/// Within a run the chunks are fixed, so a level changes by the same amount at every step and its
/// maximum is at one end of the run.
///
/// Why steady state can be skipped: while the forwards stay in the full groups of pp micro-batches
/// (schedule::table_pass), the chunks of the steady pairs repeat every P = pp·vpp pairs, and each
/// period adds and frees every chunk pp times. A visitor whose level depends only on which chunk
/// passes are live therefore sees the same values in every period. After the first period the walk
/// calls v.rewind() (restore the level v.steady() saw) and jumps to the last whole period before
/// the forwards leave the full groups; the pairs after that are visited.
template <class Visitor>
void walk_runs(std::int64_t rank, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches, bool cooldown,
               Visitor& v) {
  using schedule::TableCursor;
  const std::int64_t total = microbatches * vpp;
  const std::int64_t w = schedule::warmup_passes(rank, pp, vpp, microbatches);
  const std::int64_t steady = total - w;  // forward/backward pairs
  const std::int64_t period = pp * vpp;
  const std::int64_t full = (microbatches / pp) * pp * vpp;  // forward table entries in full groups
  TableCursor fwd(0, pp, vpp, microbatches), bwd(0, pp, vpp, microbatches);
  for (std::int64_t i = 0; i < w;) {
    const std::int64_t n = std::min(fwd.run_left(), w - i);
    v.forwards(i, n, fwd.pass(false));
    fwd.advance(n);
    i += n;
  }
  v.steady();
  for (std::int64_t j = 0; j < steady;) {
    // Runs end where either cursor changes chunk; in the full groups that is every pp entries of
    // the backward cursor, so j reaches `period` exactly.
    if (j == period && full - w >= 2 * period) {
      // Pairs [period, jump) repeat pairs [0, period) value for value (see above).
      j = period * ((full - w) / period);
      v.rewind();
      if (j >= steady) break;
      fwd = TableCursor(w + j, pp, vpp, microbatches);
      bwd = TableCursor(j, pp, vpp, microbatches);
    }
    const std::int64_t n = std::min({fwd.run_left(), bwd.run_left(), steady - j});
    v.pairs(w + 2 * j, n, fwd.pass(false), bwd.pass(true));
    fwd.advance(n);
    bwd.advance(n);
    j += n;
  }
  if (!cooldown) return;
  bwd = TableCursor(steady, pp, vpp, microbatches);
  for (std::int64_t k = steady; k < total && !v.done();) {
    const std::int64_t n = std::min(bwd.run_left(), total - k);
    v.backwards(w + steady + k, n, bwd.pass(true));
    bwd.advance(n);
    k += n;
  }
}

/// The same one pass at a time: v.forward(pass, p), v.backward(pass, p), v.steady(), v.rewind(),
/// v.done(). For visitors that sum level by level (rank_memory keeps its sums in pass order).
template <class Visitor>
void walk_passes(std::int64_t rank, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches, bool cooldown,
                 Visitor& v) {
  struct Steps {
    Visitor& v;
    static schedule::PipelinePass at(schedule::PipelinePass p, std::int64_t k) {
      p.microbatch += static_cast<std::int32_t>(k);
      return p;
    }
    void forwards(std::int64_t pass, std::int64_t n, const schedule::PipelinePass& p) {
      for (std::int64_t k = 0; k < n; ++k) v.forward(pass + k, at(p, k));
    }
    void pairs(std::int64_t pass, std::int64_t n, const schedule::PipelinePass& f, const schedule::PipelinePass& b) {
      for (std::int64_t k = 0; k < n; ++k) {
        v.forward(pass + 2 * k, at(f, k));
        v.backward(pass + 2 * k + 1, at(b, k));
      }
    }
    void backwards(std::int64_t pass, std::int64_t n, const schedule::PipelinePass& b) {
      for (std::int64_t k = 0; k < n && !v.done(); ++k) v.backward(pass + k, at(b, k));
    }
    void steady() { v.steady(); }
    void rewind() { v.rewind(); }
    [[nodiscard]] bool done() const { return v.done(); }
  } steps{v};
  walk_runs(rank, pp, vpp, microbatches, cooldown, steps);
}

}  // namespace moesim::memory::detail
