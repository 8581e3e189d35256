#pragma once
// The parts of a Result that both fidelities derive the same way once the step time is known:
// throughput, MFU, the derived layout, the memory estimate and the warnings about assumptions.
#include <string_view>
#include <vector>

#include "record/result.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::program {

class LayerCostModel;

/// A Result with the scenario, fidelity, seed, version and parameter counts filled in.
[[nodiscard]] Result start_result(const Scenario& s, Fidelity fidelity);

/// Fills throughput, MFU, layout, warnings and memory (memory/memory_result.hpp) from
/// `r.step_time_s` (which must be > 0). `expert_load_factor`: routed copies on the most loaded EP
/// rank over the balanced share, for its activations (1 = balanced).
/// What the result's memory section is computed from.
struct MemoryInputs {
  double expert_load_factor = 1.0;        ///< routed copies on the most loaded EP rank over the balanced share
  /// false leaves `memory` empty: the planner has already run the memory model for its verdict and
  /// needs only the time from the estimate (docs/planner.md).
  bool compute = true;
};

/// `costs`: the cost model the step was priced with; with a calibration profile its counters become the
/// warnings that say which kernels and collectives the profile answered (program/profile_warnings) —
/// unless `memory.compute` is false (the planner's search, which reads only the step time): then one
/// line names the profile.
void finish_result(Result& r, const std::vector<schedule::StageLayers>& stages, const MemoryInputs& memory = {},
                   const LayerCostModel* costs = nullptr);

}  // namespace moesim::program
