#pragma once
// `moesim validate --json`: the comparison of a measured proxy run with its prediction
// (moesim.validation/1, docs/reports.md).
#include <string>

#include "scenario/validation_result.hpp"

namespace moesim::report {

[[nodiscard]] std::string validation_to_json_text(const ValidationResult& v);

}  // namespace moesim::report
