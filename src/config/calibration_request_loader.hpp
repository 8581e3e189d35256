#pragma once
// The strict calibration-request loader (`moesim.calibration-request/1`, docs/profile.md): JSON →
// hw::CalibrationRequest, for moesim-calibrate (calibrate/), which measures the shapes on top of its
// generic grid. report/calibration_request_json writes the file. Every shape must lie within what the
// calibrator measures (hw::calibration_limits); each error is one InputError naming the file, the
// JSON path, the value, the rule and the allowed values.
#include <string>

#include "config/json_reader.hpp"
#include "hw/profile.hpp"

namespace moesim::config {

/// Parses a request object; `file` is used in messages. Absent tables are empty.
[[nodiscard]] hw::CalibrationRequest parse_calibration_request(const Json& obj, const std::string& file);
/// Reads a request file (missing, unreadable or malformed → InputError naming the file).
[[nodiscard]] hw::CalibrationRequest load_calibration_request(const std::string& path);

}  // namespace moesim::config
