#pragma once
// `moesim regress`: the comparison of a run of the suite (regress/suite.hpp) with the checked-in
// baselines (docs/reports.md). Pure functions: cli/cmd_regress.cpp does the I/O.
#include <optional>
#include <string>
#include <vector>

#include "record/regression.hpp"

namespace moesim::regress {

struct Drift {
  std::string id;
  std::optional<RegressionPoint> baseline;  ///< absent: no baseline file
  std::optional<RegressionPoint> now;       ///< absent: a baseline whose point left the suite
  double step = 0, tokens = 0, peak = 0;    ///< relative drifts (now − baseline) / baseline
  bool ok = false;
};

/// Pairs the baselines with this run's points by id and judges each against `tolerance` (a fraction).
[[nodiscard]] std::vector<Drift> compare(const std::vector<RegressionPoint>& baselines, const std::vector<RegressionPoint>& now,
                                         double tolerance);

/// The baseline already holds this run's figures and scenario exactly: `--update` leaves its file alone.
[[nodiscard]] bool unchanged(const Drift& d);

/// The table of drifts, one row per point.
[[nodiscard]] std::string drift_table(const std::vector<Drift>& drifts, double tolerance);

/// "2%" → 0.02, "0.02" → 0.02; InputError otherwise (negative, not a number).
[[nodiscard]] double parse_tolerance(const std::string& text);

}  // namespace moesim::regress
