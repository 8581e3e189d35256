#pragma once
// One point of `moesim regress` (docs/reports.md): a suite scenario at one fidelity and the figures
// the CI guard compares. regress/ computes them, report/ writes a baseline (moesim.baseline/1), config/
// reads one back. Plain data only, like result.hpp.
#include <string>

namespace moesim {

struct RegressionPoint {
  std::string id;          ///< file stem: "<scenario stem>.<fidelity>", e.g. "mixtral-8x7b-h100-64.simulation"
  std::string scenario;    ///< the scenario argument: a built-in name or a path relative to the repository root
  std::string fidelity;    ///< "simulation" or "estimate"
  double step_time_s = 0;
  double tokens_per_s = 0;
  double peak_bytes = 0;   ///< largest per-GPU peak memory over the pipeline stages
  std::string moesim_version;
};

}  // namespace moesim
