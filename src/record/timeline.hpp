#pragma once
// What the step simulation did, op by op: the input of the Chrome/Perfetto trace writer (report/)
// and of the report's timeline chart. Produced by sim/; report/ only reads it.
// Times are integer picoseconds from the start of the step (the engine's clock), so equal inputs
// give byte-identical traces.
#include <cstdint>
#include <string>
#include <vector>

namespace moesim {

/// One simulated rank: a trace "process" with one track ("thread") per stream.
struct TimelineProcess {
  std::string name;                 ///< e.g. "rank 0 (pp 0, tp 0, ep 0, dp 0)"
  std::int64_t rank = 0;            ///< global rank (Megatron order); the trace's pid
  std::vector<std::string> tracks;  ///< stream names in display order, e.g. "compute", "tp comm"
};

/// One op as it ran: a complete event on one track.
struct TimelineEvent {
  std::int32_t process = 0;     ///< index into Timeline::processes
  std::int32_t track = 0;       ///< index into that process's tracks
  std::uint32_t name = 0;       ///< index into Timeline::names (ops repeat; names are interned)
  std::uint32_t category = 0;   ///< index into Timeline::names ("compute", "tp_comm", "ep_comm", ...)
  std::int64_t start_ps = 0;
  std::int64_t duration_ps = 0;
  double bytes = 0;             ///< bytes moved (communication) or touched (memory-bound kernels); 0 if n/a
  double flops = 0;             ///< floating-point operations (GEMMs, attention); 0 if n/a
  std::int32_t microbatch = -1; ///< -1 when the op belongs to no micro-batch (optimizer, DP sync)
  std::int32_t chunk = -1;      ///< virtual pipeline chunk, -1 if n/a
  bool backward = false;        ///< part of a backward pass (incl. recompute)
};

/// A dependency arrow between two events on different processes (pipeline send → receive).
struct TimelineFlow {
  std::int64_t from_event = 0;  ///< index into Timeline::events
  std::int64_t to_event = 0;
  std::uint32_t name = 0;       ///< index into Timeline::names
};

struct Timeline {
  std::vector<std::string> names;
  std::vector<TimelineProcess> processes;
  std::vector<TimelineEvent> events;
  std::vector<TimelineFlow> flows;

  /// Index of `s` in `names`, appended if new. Linear in the number of distinct names, which stays
  /// small (op kinds, not op instances); callers intern once and reuse the index.
  std::uint32_t intern(const std::string& s) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (names[i] == s) return static_cast<std::uint32_t>(i);
    }
    names.push_back(s);
    return static_cast<std::uint32_t>(names.size() - 1);
  }
};

}  // namespace moesim
