#pragma once
// Parameters one rank of a pipeline stage holds, split by how the layout shards them.
#include <vector>

#include "schedule/stage_plan.hpp"
#include "scenario/scenario.hpp"

namespace moesim::schedule {

struct RankParams {
  double dense = 0;   ///< non-expert weights on this rank (after TP sharding); reduced over DP
  double expert = 0;  ///< routed-expert weights on this rank (after EP·ETP sharding); reduced over expert-DP
  [[nodiscard]] double total() const { return dense + expert; }
};

/// Weights held by one rank of each pipeline stage.
[[nodiscard]] std::vector<RankParams> rank_params(const Scenario& s, const std::vector<StageLayers>& stages);

}  // namespace moesim::schedule
