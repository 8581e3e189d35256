#pragma once
// JSON writer of results (schema "moesim.result/1"); the scenario echo is report/scenario_json. Read-only over the
// result structs; deterministic: the same Result gives byte-identical text.
#include <string>

#include <nlohmann/json.hpp>

#include "record/result.hpp"

namespace moesim::report {

/// Full model definition with Megatron-Core names (loadable again as a scenario "model" object).
[[nodiscard]] nlohmann::json model_to_json(const model::ModelSpec& m);
[[nodiscard]] nlohmann::json result_to_json(const Result& r);
[[nodiscard]] nlohmann::json breakdown_to_json(const Breakdown& b);
/// Pretty-printed (2-space indent) JSON text with a trailing newline.
[[nodiscard]] std::string result_to_json_text(const Result& r);

}  // namespace moesim::report
