#pragma once
// The terminal rendering of a plan: ranked table, explanation, rejections, precision advice, skew
// sensitivity, Pareto front, what was held fixed.
#include <cstdint>
#include <string>

#include "record/plan.hpp"

namespace moesim::cli {

[[nodiscard]] std::string format_plan(const Plan& plan);

/// What a stopped plan found: the best `top` candidates of a search that covered `considered` of
/// `total` candidates, ranked by the closed-form estimate (nothing was simulated).
[[nodiscard]] std::string format_partial_search(const PlanRequest& request, const SearchEvaluation& search,
                                                std::int64_t total, std::int64_t top);

}  // namespace moesim::cli
