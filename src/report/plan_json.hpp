#pragma once
// JSON writers of planning answers: the plan (schema moesim.plan/1, docs/planner.md) and one shard's
// search (moesim.plan-shard/1, read back by config/plan_loader for `moesim merge`). Deterministic:
// the same plan gives the same bytes; numbers use their shortest round-trip form, so a shard's
// figures come back exactly.
#include <string>

#include <nlohmann/json.hpp>

#include "record/plan.hpp"

namespace moesim::report {

inline constexpr const char* kPlanSchema = "moesim.plan/1";

[[nodiscard]] nlohmann::json plan_request_to_json(const PlanRequest& r);
/// Compact text of the request: shards of one plan have identical text.
[[nodiscard]] std::string plan_request_to_json_text(const PlanRequest& r);
[[nodiscard]] nlohmann::json candidate_to_json(const Candidate& c);
[[nodiscard]] nlohmann::json plan_to_json(const Plan& p);
[[nodiscard]] std::string plan_to_json_text(const Plan& p);
[[nodiscard]] std::string search_shard_to_json_text(const PlanRequest& r, const SearchEvaluation& e);
/// A sweep's checkpoint: the search of the shard's first `done` of `total` candidates (moesim.plan-checkpoint/1).
[[nodiscard]] std::string search_checkpoint_to_json_text(const PlanRequest& r, const SearchEvaluation& e, std::int64_t done,
                                                         std::int64_t total);

}  // namespace moesim::report
