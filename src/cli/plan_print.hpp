#pragma once
// The terminal rendering of a plan: ranked table, explanation, rejections, precision advice, skew
// sensitivity, Pareto front, what was held fixed.
#include <string>

#include "scenario/plan.hpp"

namespace moesim::cli {

[[nodiscard]] std::string format_plan(const Plan& plan);

}  // namespace moesim::cli
