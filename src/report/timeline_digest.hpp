#pragma once
// A bounded digest of a simulated step's timeline for the HTML report: the critical ranks only and
// at most a fixed number of events, so a page stays a few MB at most whatever the scenario size.
// (The full timeline goes to the Perfetto trace, `simulate --trace`.)
#include <cstddef>

#include <nlohmann/json.hpp>

#include "record/timeline.hpp"

namespace moesim::report {

struct TimelineDigestLimits {
  std::size_t max_processes = 8;   ///< ranks shown: those that finish last (the critical path) first
  std::size_t max_events = 12000;  ///< beyond this, neighbouring ops merge into blocks, then the shortest blocks go
};

/// {"processes":[{name,rank,tracks}], "names":[...], "events":[[process,track,name,category,start_us,
/// duration_us,bytes,flops,microbatch,backward,ops]...], "events_total":N ops, "events_shown":M ops}.
/// `ops` > 1 marks a block of merged neighbouring ops (name is then their category unless all share one).
[[nodiscard]] nlohmann::json timeline_digest(const Timeline& t, const TimelineDigestLimits& limits = {});

}  // namespace moesim::report
