#pragma once
// The provenance block of a measured profile: the device, its clocks, the driver and library
// versions, when, where and by which command.
#include <string>

#include "hw/profile.hpp"

namespace moesim::calibrate {

/// Reads device 0 and the loaded libraries; `command` is the command line as typed.
[[nodiscard]] hw::ProfileProvenance measured_provenance(int gpus_visible, const std::string& command);

/// The current time in UTC, ISO-8601 ("2026-12-04T10:11:12Z").
[[nodiscard]] std::string utc_now_iso8601();

}  // namespace moesim::calibrate
