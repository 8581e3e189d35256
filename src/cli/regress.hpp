#pragma once
// `moesim regress`: the fixed suite of scenarios whose predictions CI guards, and the comparison of a
// run with the checked-in baselines (docs/reports.md). Pure functions: cmd_regress.cpp does the I/O.
#include <optional>
#include <string>
#include <vector>

#include "scenario/regression.hpp"

namespace moesim::cli {

struct SuiteEntry {
  std::string scenario;  ///< built-in name, or a file name inside the suite folder
  std::string fidelity;
};

/// Dense and MoE, H100/H200/B200/GB200, balanced and skewed, at both fidelities.
[[nodiscard]] const std::vector<SuiteEntry>& regression_suite();

/// "mixtral-8x7b-h100-64.simulation" for the built-in, "llama-3-8b-h100-16.estimate" for a file.
[[nodiscard]] std::string point_id(const SuiteEntry& e);

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

/// The table of drifts, one row per point.
[[nodiscard]] std::string drift_table(const std::vector<Drift>& drifts, double tolerance);

/// "2%" → 0.02, "0.02" → 0.02; InputError otherwise (negative, not a number).
[[nodiscard]] double parse_tolerance(const std::string& text);

}  // namespace moesim::cli
