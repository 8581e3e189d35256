#pragma once
// The scenario echo (schema moesim.scenario/1): the scenario as understood, every default filled in,
// written through the field tables (scenario/scenario_fields.hpp) so that it names exactly the keys
// the loader reads, and loads again as the same scenario.
#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"

namespace moesim::report {

[[nodiscard]] nlohmann::json scenario_to_json(const Scenario& s);
/// The echo as a scenario file's text (indented, newline-terminated).
[[nodiscard]] std::string scenario_to_json_text(const Scenario& s);
/// "moe.routing": the distribution, its one parameter, the variation switches, device-limited routing.
[[nodiscard]] nlohmann::json routing_to_json(const RoutingSpec& r);
/// "recompute": {"granularity", "modules" (selective only)}.
[[nodiscard]] nlohmann::json recompute_to_json(const RecomputeSpec& r);

}  // namespace moesim::report
