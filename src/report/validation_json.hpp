#pragma once
// `moesim validate --json`: the comparison of a measured proxy run with its prediction
// (moesim.validation/1, docs/reports.md); and the measured run itself (moesim.validation-measured/1,
// docs/validation.md), as the proxy runner writes it and config::load_measured_run reads it.
#include <string>

#include "record/validation_result.hpp"

namespace moesim::report {

[[nodiscard]] std::string validation_to_json_text(const ValidationResult& v);

/// The measured run as moesim.validation-measured/1, every phase of validation_phases() written
/// (absent ones as 0).
[[nodiscard]] std::string measured_run_to_json_text(const MeasuredRun& m);

}  // namespace moesim::report
