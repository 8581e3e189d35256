#include "predict/predict.hpp"

#include "estimate/step_estimator.hpp"

namespace moesim::predict {

Prediction predict(const Scenario& scenario, Fidelity fidelity, const sim::SimOptions& options) {
  if (fidelity == Fidelity::kEstimate) return {estimate::estimate_step(scenario), {}};
  sim::SimOutput out = sim::simulate_step(scenario, options);
  return {std::move(out.result), std::move(out.timeline)};
}

Fidelity finest_fidelity(const Scenario& scenario) {
  return sim::simulation_fits(scenario) ? Fidelity::kSimulation : Fidelity::kEstimate;
}

}  // namespace moesim::predict
