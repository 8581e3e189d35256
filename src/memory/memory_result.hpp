#pragma once
// The result's `memory` section from the per-rank memory model: one row per pipeline stage (the
// most loaded rank of the stage), the peak over all ranks, the GPU's capacity and whether it fits.
#include <string>
#include <vector>

#include "memory/rank_memory.hpp"
#include "record/result.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::memory {

/// `expert_load_factor`: routed copies on the most loaded EP rank over the balanced share (1 under
/// balanced routing; the simulation passes the worst draw). Appends a warning when it does not fit.
[[nodiscard]] MemoryResult memory_result(const Scenario& s, const std::vector<schedule::StageLayers>& stages,
                                         double expert_load_factor, std::vector<std::string>& warnings);

}  // namespace moesim::memory
