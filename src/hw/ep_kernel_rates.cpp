#include "hw/ep_kernel_rates.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>

namespace moesim::hw {

BytesPerSecond EpKernelRow::rate(EpKernelPhase phase) const {
  switch (phase) {
    case EpKernelPhase::kDispatchFp8: return dispatch_fp8;
    case EpKernelPhase::kDispatchBf16: return dispatch_bf16;
    case EpKernelPhase::kCombine: return combine;
  }
  return combine;
}

std::optional<BytesPerSecond> EpKernelTable::rate(EpKernelPhase phase, std::int64_t ranks, std::int64_t sms) const {
  if (rows.empty()) return std::nullopt;
  // The nearest published group size; on a tie the larger one (more ranks, lower rate: the cautious side).
  std::int64_t nearest = rows.front().ranks;
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (const auto& r : rows) {
    const std::int64_t d = std::llabs(r.ranks - ranks);
    if (d < best || (d == best && r.ranks > nearest)) {
      best = d;
      nearest = r.ranks;
    }
  }
  std::vector<const EpKernelRow*> at;
  for (const auto& r : rows) {
    if (r.ranks == nearest) at.push_back(&r);
  }
  std::sort(at.begin(), at.end(), [](const EpKernelRow* a, const EpKernelRow* b) { return a->sms < b->sms; });
  if (sms <= at.front()->sms) return at.front()->rate(phase);
  if (sms >= at.back()->sms) return at.back()->rate(phase);
  for (std::size_t i = 1; i < at.size(); ++i) {
    if (sms > at[i]->sms) continue;
    const double lo = at[i - 1]->rate(phase).value(), hi = at[i]->rate(phase).value();
    const double x = static_cast<double>(sms - at[i - 1]->sms) / static_cast<double>(at[i]->sms - at[i - 1]->sms);
    return BytesPerSecond(lo + (hi - lo) * x);
  }
  return at.back()->rate(phase);
}

}  // namespace moesim::hw
