#pragma once
// Reads a `moesim regress` baseline (moesim.baseline/1, written by report/baseline_json) strictly.
#include <filesystem>
#include <string>
#include <vector>

#include "record/regression.hpp"

namespace moesim::config {

/// Throws InputError naming the file and JSON path on a malformed or foreign file.
[[nodiscard]] RegressionPoint load_baseline(const std::string& path);

/// Every `*.json` baseline in `dir`, in file-name order; none when the folder does not exist.
[[nodiscard]] std::vector<RegressionPoint> load_baselines(const std::filesystem::path& dir);

}  // namespace moesim::config
