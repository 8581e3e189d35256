#pragma once
// `moesim validate`: a real training proxy of a scenario (its layer shapes on the GPUs at hand) is
// measured and compared with the simulator's prediction for the same scaled-down scenario, phase by
// phase (docs/validation.md). These are the plain records both sides fill; the JSON forms are
// `moesim.validation-measured/1` (what the proxy runner writes) and `moesim.validation/1`.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace moesim {

/// The components a step is compared by. Both the proxy runner (CUDA events around each block) and
/// the simulation's op timeline (op names, validate/phases) sort their time into these.
inline const std::vector<std::string>& validation_phases() {
  static const std::vector<std::string> names{"attention", "mlp",     "ep_comm", "tp_comm",
                                              "dp_comm",   "optimizer"};
  return names;
}

/// What the proxy runner measured on rank 0, per step (the mean of the timed steps).
struct MeasuredRun {
  std::string source;  ///< what produced it (runner, version, command) — or a note that it is an example
  std::string gpu;     ///< GPU preset name of the machine (e.g. "h200-sxm")
  std::int64_t gpus = 0, layers = 0, steps = 0, warmup = 0;
  double step_time_s = 0;
  std::map<std::string, double> phases_s;  ///< keys from validation_phases()
  double peak_memory_bytes = 0;
};

struct PhaseComparison {
  std::string phase;
  double predicted_s = 0, measured_s = 0;
  double error = 0;           ///< (predicted − measured) / measured; 0 when both are 0
  bool error_defined = true;  ///< false when measured is 0 but predicted is not
};

struct ValidationResult {
  std::string scenario;            ///< the scenario's name
  std::vector<std::string> proxy;  ///< how the scenario was scaled down, one line each
  MeasuredRun measured;
  double predicted_step_time_s = 0, predicted_peak_memory_bytes = 0;
  std::vector<PhaseComparison> phases;
  double step_time_error = 0, peak_memory_error = 0;
  std::string worst_phase;  ///< the phase with the largest |predicted − measured| seconds
  double step_time_bound = 0.10, peak_memory_bound = 0.10;
  bool within_bounds = false;
};

}  // namespace moesim
