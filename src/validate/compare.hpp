#pragma once
// The prediction for a validation proxy and its comparison with what the proxy runner measured.
#include <map>
#include <string>

#include "record/validation_result.hpp"
#include "validate/proxy.hpp"

namespace moesim::validate {

struct ProxyPrediction {
  double step_time_s = 0;                  ///< the simulated step less the head ops the proxy does not run
  std::map<std::string, double> phases_s;  ///< rank 0's seconds per validation phase
  double peak_memory_bytes = 0;            ///< largest per-GPU peak of the memory model
};

/// Simulates the proxy scenario (fidelity simulation, with its calibration profile when it names one).
[[nodiscard]] ProxyPrediction predict_proxy(const ProxyPlan& plan);

/// Compares a measured run with the prediction. Throws InputError (path into the measured file) when
/// the run is not of this proxy: another GPU type, GPU count or layer count.
[[nodiscard]] ValidationResult compare_run(const std::string& scenario_name, const ProxyPlan& plan,
                                           const ProxyPrediction& predicted, const MeasuredRun& measured);

}  // namespace moesim::validate
