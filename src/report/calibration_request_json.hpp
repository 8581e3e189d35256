#pragma once
// JSON of a calibration request (schema "moesim.calibration-request/1", docs/profile.md), the file
// `moesim calibrate` hands to the calibrate binary; deterministic text.
#include <string>

#include "hw/profile.hpp"

namespace moesim::report {

[[nodiscard]] std::string calibration_request_json_text(const hw::CalibrationRequest& request);

}  // namespace moesim::report
