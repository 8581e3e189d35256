#pragma once
// Fidelity "estimate": a closed-form step time for a scenario, from per-layer costs composed over
// the pipeline schedule, plus DP gradient traffic, the optimizer step and a first memory estimate.
// Built to be called thousands of times a second by the planner.
#include "record/result.hpp"

namespace moesim::estimate {

struct EstimateOptions {
  /// false skips the result's memory section (left empty): for callers that ran the memory model
  /// themselves, such as the planner's search, which calls this tens of thousands of times. It also
  /// leaves out a calibration profile's per-kind account in the warnings (one line names the profile).
  bool memory = true;
};

/// Answers the scenario at fidelity "estimate". The scenario must have passed validate_layout.
[[nodiscard]] Result estimate_step(const Scenario& scenario, const EstimateOptions& options = {});

}  // namespace moesim::estimate
