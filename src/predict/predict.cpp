#include "predict/predict.hpp"

#include "estimate/step_estimator.hpp"

namespace moesim::predict {

Prediction predict(const Scenario& scenario, Fidelity fidelity, const sim::SimOptions& options) {
  if (fidelity == Fidelity::kEstimate) return {estimate::estimate_step(scenario), {}};
  sim::SimOutput out = sim::simulate_step(scenario, options);
  return {std::move(out.result), std::move(out.timeline)};
}

void add_whatif_baseline(Result& result, const sim::SimOptions& options) {
  if (!result.scenario.whatif.any()) return;
  // The same question with the kernels as predicted: same seed and fidelity, so the two differ by the
  // speed-ups alone; no timeline, no second progress line.
  Scenario baseline = result.scenario;
  baseline.whatif = {};
  sim::SimOptions quiet = options;
  quiet.record_timeline = false;
  quiet.progress = nullptr;
  const Result b = predict(baseline, result.fidelity, quiet).result;
  result.whatif_baseline = {.present = true,
                            .step_time_s = b.step_time_s,
                            .tokens_per_s_per_gpu = b.tokens_per_s_per_gpu,
                            .mfu = b.mfu,
                            .breakdown = b.breakdown};
}

Fidelity finest_fidelity(const Scenario& scenario) {
  return sim::simulation_fits(scenario) ? Fidelity::kSimulation : Fidelity::kEstimate;
}

}  // namespace moesim::predict
