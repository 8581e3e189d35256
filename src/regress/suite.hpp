#pragma once
// The fixed suite of scenarios whose predictions `moesim regress` guards (docs/reports.md), the id of
// each point, and running it: scenario → prediction → RegressionPoint. cli/cmd_regress.cpp does the I/O.
#include <filesystem>
#include <string>
#include <vector>

#include "record/regression.hpp"

namespace moesim::regress {

struct SuiteEntry {
  std::string scenario;  ///< built-in name, or a file name inside the suite folder
  std::string fidelity;
};

/// Dense and MoE, H100/H200/B200/GB200, balanced and skewed, at both fidelities.
[[nodiscard]] const std::vector<SuiteEntry>& regression_suite();

/// "mixtral-8x7b-h100-64.simulation" for the built-in, "llama-3-8b-h100-16.estimate" for a file.
[[nodiscard]] std::string point_id(const SuiteEntry& e);

/// One suite point predicted; a file entry is read from `suite_dir`. Throws InputError on a bad scenario.
[[nodiscard]] RegressionPoint run_point(const SuiteEntry& e, const std::filesystem::path& suite_dir);

/// Every point of regression_suite(), in suite order.
[[nodiscard]] std::vector<RegressionPoint> run_suite(const std::filesystem::path& suite_dir);

}  // namespace moesim::regress
