#pragma once
// Writer of a `moesim regress` baseline (schema moesim.baseline/1, reports/baselines/*.json). Numbers
// use their shortest round-trip form so a baseline read back compares equal to what was written.
#include <string>

#include "record/regression.hpp"

namespace moesim::report {

inline constexpr const char* kBaselineSchema = "moesim.baseline/1";

/// Pretty-printed JSON text with a trailing newline.
[[nodiscard]] std::string baseline_to_json_text(const RegressionPoint& p);

}  // namespace moesim::report
