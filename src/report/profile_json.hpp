#pragma once
// JSON of a calibration profile (schema "moesim.profile/1", docs/profile.md), as moesim-calibrate
// writes it after a run; config/profile_loader reads it back. Fields in the schema's order, every
// table present even when empty, 2-space indent and a trailing newline: deterministic text.
#include <string>

#include "hw/profile.hpp"

namespace moesim::report {

/// The provenance's unknown figures (nullopt, a published profile) are left out, as the loader allows.
[[nodiscard]] std::string profile_to_json_text(const hw::Profile& profile);

}  // namespace moesim::report
