#pragma once
// Checks of command-line values that CLI11's own validators let through: CLI::Range compares with
// < and >, so "nan" passes every range, and "inf" passes an open one.
#include <string>

#include <CLI/CLI.hpp>

namespace moesim::cli {

/// A finite number in [min, max]: "nan", "inf" and values outside refused with CLI11's message form.
[[nodiscard]] CLI::Validator finite_range(double min, double max);

}  // namespace moesim::cli
