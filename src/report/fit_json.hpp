#pragma once
// Writer of the fitted constants file (schema moesim.fitted/1, record/fit.hpp;
// calibrate/fitted/constants.json). Numbers in their shortest round-trip form, keys in a fixed order:
// the same fit writes the same bytes.
#include <string>

#include "record/fit.hpp"

namespace moesim::report {

/// Pretty-printed JSON text with a trailing newline.
[[nodiscard]] std::string fit_record_to_json_text(const FitRecord& record);

}  // namespace moesim::report
