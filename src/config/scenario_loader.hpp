#pragma once
// The strict scenario loader (../shared/spec/scenario.md, version 1): JSON → Scenario with every
// default filled in, then validate_layout. Every error is one InputError naming the file, JSON path,
// value, rule and allowed values.
#include <filesystem>
#include <string>

#include "config/json_reader.hpp"
#include "scenario/scenario.hpp"

namespace moesim::config {

/// Loads a scenario file. Relative paths inside it (hf_config, histogram file, profile, topology)
/// are resolved against the file's folder.
[[nodiscard]] Scenario load_scenario_file(const std::string& path);

/// Parses a scenario object; `file` is used in messages, `base_dir` resolves relative paths.
[[nodiscard]] Scenario parse_scenario(const Json& obj, const std::string& file, const std::filesystem::path& base_dir);

/// parse_scenario without the cross-field layout rules (validate_layout): the planner's base
/// scenario, whose layout is a placeholder the search replaces.
[[nodiscard]] Scenario parse_scenario_spec(const Json& obj, const std::string& file, const std::filesystem::path& base_dir);

}  // namespace moesim::config
