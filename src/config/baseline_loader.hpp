#pragma once
// Reads a `moesim regress` baseline (moesim.baseline/1, written by report/baseline_json) strictly.
#include <string>

#include "scenario/regression.hpp"

namespace moesim::config {

/// Throws InputError naming the file and JSON path on a malformed or foreign file.
[[nodiscard]] RegressionPoint load_baseline(const std::string& path);

}  // namespace moesim::config
