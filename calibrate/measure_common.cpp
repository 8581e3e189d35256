#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "calibrate/measure.hpp"

namespace moesim::calibrate {

hw::ProfileTiming to_timing(const kernels::Summary& s) { return hw::ProfileTiming{s.median, s.spread(), s.repeats}; }

kernels::TimingPlan timing_plan(const Repeats& r, bool alternative) {
  kernels::TimingPlan p;
  p.warmup = alternative ? std::min(r.warmup, 2) : r.warmup;
  p.repeats = alternative ? r.alternative_repeats : r.repeats;
  p.large_call_us = r.large_call_us;
  p.large_repeats = std::min(p.repeats, r.large_repeats);
  return p;
}

bool guarded(MeasureContext& ctx, const std::string& what, const std::function<void()>& body) {
  try {
    body();
    return true;
  } catch (const std::exception& e) {
    ctx.failures.push_back(fmt::format("{}: {}", what, e.what()));
    ctx.log.warning(fmt::format("{} not recorded: {}", what, e.what()));
    return false;
  }
}

void note_unsupported(MeasureContext& ctx, const std::string& what) {
  if (std::find(ctx.unsupported.begin(), ctx.unsupported.end(), what) != ctx.unsupported.end()) return;
  ctx.unsupported.push_back(what);
  ctx.log.progress(fmt::format("  unsupported here (recorded as such, not an error): {}", what));
}

}  // namespace moesim::calibrate
