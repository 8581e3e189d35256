#pragma once
// Reads what the validation proxy runner measured (moesim.validation-measured/1, docs/validation.md)
// strictly: unknown keys, a phase name outside validation_phases(), negative or missing figures are
// refused with the file, JSON path, value and rule.
#include <string>

#include "record/validation_result.hpp"

namespace moesim::config {

[[nodiscard]] MeasuredRun load_measured_run(const std::string& path);

}  // namespace moesim::config
