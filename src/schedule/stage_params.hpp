#pragma once
// Parameters one rank of a pipeline stage holds, split by how the layout shards them.
#include <cstdint>
#include <vector>

#include "model/counts.hpp"
#include "schedule/stage_plan.hpp"
#include "scenario/scenario.hpp"

namespace moesim::schedule {

struct RankParams {
  double dense = 0;   ///< non-expert weights on this rank (after TP sharding); reduced over DP
  double expert = 0;  ///< routed-expert weights on this rank (after EP·ETP sharding); reduced over expert-DP
  [[nodiscard]] double total() const { return dense + expert; }
  RankParams& operator+=(const RankParams& o) {
    dense += o.dense;
    expert += o.expert;
    return *this;
  }
};

/// Weights of one transformer layer on one rank.
[[nodiscard]] RankParams layer_rank_params(const Scenario& s, std::int64_t layer);
/// The same from the layer's counts, for callers that need the counts too (one count, not two).
[[nodiscard]] RankParams layer_rank_params(const Scenario& s, const model::LayerParams& lp);
/// Routed-expert weights of one layer on one rank: its share of the EP·ETP shards, with the EPLB
/// replicas its redundant slots hold (an expert's weights, gradients and optimizer state are kept per
/// copy: scenario moe.placement).
[[nodiscard]] double rank_expert_params(const Scenario& s, const model::LayerParams& lp);
/// The input embedding's shard (first stage).
[[nodiscard]] RankParams embedding_rank_params(const Scenario& s);
/// The last stage's LM head shard (a tied head still needs its own copy when pp > 1) and final norm.
[[nodiscard]] RankParams output_head_rank_params(const Scenario& s);
/// One MTP module: its transformer layer, the eh projection and its two norms.
[[nodiscard]] RankParams mtp_module_rank_params(const Scenario& s);

/// Weights held by one rank of each pipeline stage.
[[nodiscard]] std::vector<RankParams> rank_params(const Scenario& s, const std::vector<StageLayers>& stages);

}  // namespace moesim::schedule
