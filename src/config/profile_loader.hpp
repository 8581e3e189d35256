#pragma once
// The strict calibration-profile loader (`moesim.profile/1`, docs/profile.md): JSON → hw::Profile.
// Every error is one InputError naming the file, the JSON path, the value, the rule and the allowed
// values. Checked-in profiles (calibrate/profiles/*.json) are embedded in the binary like the presets.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "config/json_reader.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/profile.hpp"

namespace moesim::config {

/// Parses a profile object; `file` is used in messages and kept in Profile::file.
[[nodiscard]] std::shared_ptr<hw::Profile> parse_profile(const Json& obj, const std::string& file);
/// Reads a profile file (missing, unreadable, truncated or malformed → InputError naming the file).
[[nodiscard]] std::shared_ptr<hw::Profile> load_profile_file(const std::string& path);

/// Names of the checked-in profiles (calibrate/profiles/NAME.json), sorted.
[[nodiscard]] std::vector<std::string> builtin_profile_names();
/// A checked-in profile by name; nullptr when there is none of that name.
[[nodiscard]] std::shared_ptr<hw::Profile> load_builtin_profile(const std::string& name);

/// system.profile as a scenario writes it: a file (relative to `base_dir`) when one exists there, else
/// the name of a checked-in profile. The profile must have been made on the scenario's GPU type
/// (`gpu`): otherwise an InputError at `json_path` naming both GPUs and the profiles that fit.
[[nodiscard]] std::shared_ptr<const hw::Profile> resolve_profile(const std::string& written,
                                                                 const std::filesystem::path& base_dir,
                                                                 const hw::GpuSpec& gpu, const std::string& json_path);

}  // namespace moesim::config
