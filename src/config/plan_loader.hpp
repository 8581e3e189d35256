#pragma once
// Inputs of `moesim plan` and `moesim merge`: a scenario read as a planning question (its layout
// fields, where given, become constraints of the search) and a shard's partial search read back
// strictly (schema moesim.plan-shard/1), and a sweep's checkpoint (moesim.plan-checkpoint/1).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "record/plan.hpp"

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
/// The same from text already read; `file` names it in messages.
[[nodiscard]] PlanShard parse_plan_shard(std::string_view text, const std::string& file);

/// A killed sweep's saved progress (`moesim plan --shard i/N --json FILE` keeps it in FILE.checkpoint):
/// the search of the shard's first `done` candidates, in enumeration order, of `total`.
struct PlanCheckpoint {
  PlanRequest request;
  SearchEvaluation evaluation;
  std::string moesim_version;  ///< the version that wrote it: a resume needs the same estimator
  std::int64_t done = 0, total = 0;
};

[[nodiscard]] PlanCheckpoint load_plan_checkpoint(const std::string& path);
[[nodiscard]] PlanCheckpoint parse_plan_checkpoint(std::string_view text, const std::string& file);

}  // namespace moesim::config
