#pragma once
// Simulated time: an integer count of picoseconds, so event order never depends on rounding.
#include <cmath>
#include <cstdint>

#include "core/units.hpp"

namespace moesim::engine {

using SimTime = std::int64_t;  ///< picoseconds since the start of the simulation
inline constexpr SimTime kPicosecondsPerSecond = 1'000'000'000'000;
inline constexpr SimTime kNever = INT64_MAX;

/// Rounds up, so a non-zero duration never becomes zero.
[[nodiscard]] inline SimTime to_sim_time(Seconds s) {
  return static_cast<SimTime>(std::ceil(s.value() * static_cast<double>(kPicosecondsPerSecond)));
}
[[nodiscard]] inline Seconds to_seconds(SimTime t) {
  return Seconds(static_cast<double>(t) / static_cast<double>(kPicosecondsPerSecond));
}

}  // namespace moesim::engine
