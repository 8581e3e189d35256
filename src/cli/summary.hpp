#pragma once
// Plain-text summaries for people who do not open the JSON or HTML.
#include <string>

#include "model/model_spec.hpp"
#include "record/result.hpp"

namespace moesim::cli {

/// The compact table `moesim simulate` prints: layout, step time, throughput, breakdown, memory.
[[nodiscard]] std::string format_result_summary(const Result& r);
/// One model: shape, parameter counts, FLOPs per token.
[[nodiscard]] std::string format_model_summary(const model::ModelSpec& m);
/// 1234567 → "1,234,567"
[[nodiscard]] std::string thousands(double v);

}  // namespace moesim::cli
