#pragma once
// `moesim memory --timeline` / `--timeline-csv`: the per-op memory timeline of one stage's rank as
// text (one line per pass, long runs elided) or as CSV (one row per op).
#include <string>

#include "memory/memory_timeline.hpp"

namespace moesim::cli {

/// One line per pass (direction, micro-batch, chunk, GiB after it, the most it held and at which op).
/// With more than `max_passes` passes, only the warm-up, the passes around the peak and the end are
/// shown; the CSV has every op.
[[nodiscard]] std::string timeline_text(const memory::MemoryTimeline& t, std::size_t max_passes = 64);

/// Header + one row per op: pass, microbatch, chunk, direction, op, layer, moe, running_bytes, bytes.
[[nodiscard]] std::string timeline_csv(const memory::MemoryTimeline& t);

}  // namespace moesim::cli
