#pragma once
// Why the winner wins, in terms a reviewer checks: its bottleneck breakdown, the categories where it
// differs from the runner-up, the precision choices with their accuracy risk, and what the search
// did not vary.
#include <string>
#include <vector>

#include "record/plan.hpp"

namespace moesim::planner {

/// Breakdown categories (seconds on the critical rank) in a fixed order, for tables and deltas:
/// compute, bubble, the exposed traffic by group, optimizer, host_idle (no exposed_comm, their sum).
[[nodiscard]] std::vector<std::pair<BreakdownCategory, double>> breakdown_categories(const Breakdown& b);

/// Fills plan.explanation and plan.vs_runner_up from plan.rows.
void explain_winner(Plan& plan);

/// Adds to plan.explanation, where it applies: the rows tied with the row above them, and the estimated
/// (not simulated) rows whose step beats a simulated row above them — not comparable, since the
/// finalists' simulations differ from their own estimates by the range it states.
void explain_estimated_rows(Plan& plan);

/// The accuracy risk of training in `p`, with its source (empty for bf16).
[[nodiscard]] std::string precision_risk(Precision p);

/// Knobs held at the base scenario's value, each with the reason (plan.not_searched).
[[nodiscard]] std::vector<std::string> unsearched_knobs(const PlanRequest& request);

}  // namespace moesim::planner
