#pragma once
// `moesim skew`'s computation: the step time as routing skew grows, simulated with Megatron's
// contiguous expert placement and with the EPLB-style placement (moe/placement), relative to balanced
// routing. cli/cmd_skew.cpp parses the options, prints the table and writes moesim.skew/1.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "record/skew_result.hpp"

namespace moesim::sim {

/// Which routing distribution's parameter is swept, and its values (0 = balanced routing).
struct SkewRange {
  std::string parameter = "sigma";  ///< sigma (lognormal), s (zipf), alpha (dirichlet)
  std::vector<double> values;
};

/// "sigma=0:1.5:0.25" → lognormal σ ∈ {0, 0.25, …, 1.5}; at most 100 steps. InputError (at --sweep) otherwise.
[[nodiscard]] SkewRange parse_skew_range(const std::string& text);

/// The scenario with its routing set to the range's distribution at `value`; 0 means balanced.
[[nodiscard]] Scenario with_skew(Scenario s, const std::string& parameter, double value);

/// Simulates `base` under balanced routing, then at each value of `range` with and without the
/// placement (`redundant` slots per EP rank); `on_point` sees each point as soon as it is done (the
/// table is printed as the sweep runs: a point can take seconds).
[[nodiscard]] SkewSweep sweep_skew(const Scenario& base, const SkewRange& range, std::int64_t redundant,
                                   const std::function<void(const SkewPoint&)>& on_point = {});

}  // namespace moesim::sim
