#pragma once
// One entry for a prediction at either fidelity: the closed-form estimate (estimate/) or the event
// simulation (sim/), which are peers; the commands, the accuracy runner and the planner ask here
// instead of each choosing between them again.
#include "scenario/fidelity.hpp"
#include "record/result.hpp"
#include "record/timeline.hpp"
#include "sim/step_simulator.hpp"

namespace moesim::predict {

struct Prediction {
  Result result;
  Timeline timeline;  ///< the simulated step's ops, when asked for (SimOptions::record_timeline)
};

/// Answers `scenario` (validated) at `fidelity`. `options` concern the simulation only (timeline,
/// expert placement, progress, stop); the estimate is closed form and instantaneous.
[[nodiscard]] Prediction predict(const Scenario& scenario, Fidelity fidelity, const sim::SimOptions& options = {});

/// A what-if result (its scenario's whatif.kernel_speedup has a factor other than 1): predicts the same
/// question without the speed-ups at the result's fidelity into `result.whatif_baseline`, for the report
/// to set beside it. Nothing for any other result. Called where a result is reported (simulate, the
/// plan's winner), not for every prediction.
void add_whatif_baseline(Result& result, const sim::SimOptions& options = {});

/// The simulation when the scenario is small enough to simulate op by op (sim::simulation_fits), else
/// the estimate: what the planner's finalists get.
[[nodiscard]] Fidelity finest_fidelity(const Scenario& scenario);

}  // namespace moesim::predict
