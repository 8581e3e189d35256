#pragma once
// Inputs of `moesim plan` and `moesim merge`: a scenario read as a planning question (its layout
// fields, where given, become constraints of the search) and a shard's partial search read back
// strictly (schema moesim.plan-shard/1).
#include <string>
#include <vector>

#include "scenario/plan.hpp"

namespace moesim::config {

struct PlanQuestion {
  Scenario scenario;  ///< every default filled in; the layout rules are not applied (the search does)
  /// The search-space knobs the scenario sets: keys of "parallel" (tp, cp, pp, vpp, ep, etp),
  /// "micro_batch_size", "recompute", "precision", "dispatcher" (moe.dispatcher).
  std::vector<std::string> given;
};

/// `arg` is a scenario file, else a built-in scenario name (as for `moesim simulate`).
[[nodiscard]] PlanQuestion load_plan_question(const std::string& arg);

/// The question of `moesim plan --model M --system S --gpus N --seq L --global-batch B`: a scenario
/// with every other field at its default (messages name the flags).
[[nodiscard]] PlanQuestion plan_question_from_flags(const std::string& model, const std::string& system,
                                                    std::int64_t gpus, std::int64_t seq_length,
                                                    std::int64_t global_batch);

/// Sets each list of request.space that the question's scenario fixes to that one value.
void constrain_space(const PlanQuestion& q, SearchSpace& space);

struct PlanShard {
  PlanRequest request;
  SearchEvaluation evaluation;
};

/// Reads a file written by `moesim plan --shard i/N --json FILE`.
[[nodiscard]] PlanShard load_plan_shard(const std::string& path);

}  // namespace moesim::config
