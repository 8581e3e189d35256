#include "validate/compare.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/step_simulator.hpp"
#include "validate/phases.hpp"

namespace moesim::validate {
namespace {

double relative_error(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured : 0.0;
}

}  // namespace

ProxyPrediction predict_proxy(const ProxyPlan& plan) {
  sim::SimOptions options;
  options.record_timeline = true;
  const sim::SimOutput out = sim::simulate_step(plan.scenario, options);
  const auto phases = timeline_phases(out.timeline, 0);
  ProxyPrediction p;
  for (const std::string& name : validation_phases()) {
    auto it = phases.find(name);
    p.phases_s[name] = it == phases.end() ? 0.0 : it->second;
  }
  const auto head = phases.find("head");
  p.step_time_s = out.result.step_time_s - (head == phases.end() ? 0.0 : head->second);
  p.peak_memory_bytes = out.result.memory.peak_bytes;
  return p;
}

ValidationResult compare_run(const std::string& scenario_name, const ProxyPlan& plan,
                             const ProxyPrediction& predicted, const MeasuredRun& measured) {
  const Scenario& s = plan.scenario;
  if (measured.gpu != s.system.gpu.name) {
    throw InputError("/gpu", measured.gpu, "the run was measured on another GPU type than the scenario's",
                     s.system.gpu.name);
  }
  if (measured.gpus != s.system.gpus) {
    throw InputError("/gpus", std::to_string(measured.gpus), "the run used another GPU count than the proxy",
                     std::to_string(s.system.gpus) + " (--gpus)");
  }
  if (measured.layers != s.model.num_layers) {
    throw InputError("/layers", std::to_string(measured.layers), "the run's stack has another layer count",
                     std::to_string(s.model.num_layers) + " (--layers)");
  }
  ValidationResult r;
  r.scenario = scenario_name;
  r.proxy = plan.notes;
  r.measured = measured;
  r.predicted_step_time_s = predicted.step_time_s;
  r.predicted_peak_memory_bytes = predicted.peak_memory_bytes;
  double worst = -1;
  for (const std::string& name : validation_phases()) {
    PhaseComparison c;
    c.phase = name;
    auto pit = predicted.phases_s.find(name);
    auto mit = measured.phases_s.find(name);
    c.predicted_s = pit == predicted.phases_s.end() ? 0.0 : pit->second;
    c.measured_s = mit == measured.phases_s.end() ? 0.0 : mit->second;
    c.error_defined = c.measured_s > 0 || c.predicted_s == 0;
    c.error = relative_error(c.predicted_s, c.measured_s);
    // The phase that moved the step most: the largest gap in seconds, not in percent (a 50 % error
    // on a 1 ms optimizer matters less than 10 % on the expert GEMMs).
    const double gap = std::abs(c.predicted_s - c.measured_s);
    if (gap > worst) {
      worst = gap;
      r.worst_phase = name;
    }
    r.phases.push_back(c);
  }
  r.step_time_error = relative_error(r.predicted_step_time_s, measured.step_time_s);
  r.peak_memory_error = relative_error(r.predicted_peak_memory_bytes, measured.peak_memory_bytes);
  r.within_bounds =
      std::abs(r.step_time_error) <= r.step_time_bound && std::abs(r.peak_memory_error) <= r.peak_memory_bound;
  return r;
}

}  // namespace moesim::validate
