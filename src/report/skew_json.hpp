#pragma once
// JSON of a skew sweep (schema "moesim.skew/1"); deterministic text.
#include <string>

#include "record/skew_result.hpp"

namespace moesim::report {

[[nodiscard]] std::string skew_to_json_text(const SkewSweep& sweep);

}  // namespace moesim::report
