#pragma once
// JSON writer of results (schema "moesim.result/1") and of the scenario echo. Read-only over the
// result structs; deterministic: the same Result gives byte-identical text.
#include <string>

#include <nlohmann/json.hpp>

#include "scenario/result.hpp"

namespace moesim::report {

/// Full model definition with Megatron-Core names (loadable again as a scenario "model" object).
[[nodiscard]] nlohmann::json model_to_json(const model::ModelSpec& m);
/// The scenario as understood, every default filled in (re-loadable by config::parse_scenario).
[[nodiscard]] nlohmann::json scenario_to_json(const Scenario& s);
[[nodiscard]] nlohmann::json result_to_json(const Result& r);
[[nodiscard]] nlohmann::json recompute_to_json(const RecomputeSpec& r);
[[nodiscard]] nlohmann::json breakdown_to_json(const Breakdown& b);
/// Pretty-printed (2-space indent) JSON text with a trailing newline.
[[nodiscard]] std::string result_to_json_text(const Result& r);

}  // namespace moesim::report
