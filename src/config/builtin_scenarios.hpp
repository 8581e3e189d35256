#pragma once
// Scenarios shipped inside the binary (src/scenario/builtin/*.json): the README's main job and the
// contract's examples run without any file at hand.
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace moesim::config {

[[nodiscard]] std::vector<std::string> builtin_scenario_names();
/// The JSON text of the built-in scenario `name`, or nullopt when there is none of that name.
[[nodiscard]] std::optional<std::string_view> builtin_scenario_text(const std::string& name);
/// The built-in scenario `name`, or nullopt when there is none of that name.
[[nodiscard]] std::optional<Scenario> load_builtin_scenario(const std::string& name);

/// `arg` is a scenario file when such a file exists, else a built-in scenario name; neither →
/// InputError naming the missing file and listing the built-in scenarios.
[[nodiscard]] Scenario load_scenario_argument(const std::string& arg);

}  // namespace moesim::config
