#pragma once
// Fidelity "simulation": one optimizer step run op by op on the discrete-event engine. Every
// simulated rank executes its pipeline schedule (1F1B or interleaved) with the kernels and blocking
// collectives of each layer; pipeline sends, data-parallel gradient reduce-scatters and parameter
// all-gathers run on their own streams and overlap compute; every transfer is a flow on the
// rank's NVLink and network ports, so concurrent traffic shares bandwidth (max-min fair).
// Bubbles, exposed communication and the critical rank come out of the run.
#include <cstdint>

#include "scenario/result.hpp"
#include "scenario/timeline.hpp"

namespace moesim::sim {

struct SimOptions {
  bool record_timeline = false;  ///< fill SimOutput::timeline (op-level events for the trace)
  /// Expert placement: -1 keeps Megatron's contiguous placement; N >= 0 re-places the experts of
  /// every MoE layer EPLB-style from its expected loads with N redundant slots per EP rank
  /// (moe/placement.hpp). Only matters under skewed routing.
  std::int64_t redundant_experts_per_rank = -1;
};

struct SimOutput {
  Result result;
  Timeline timeline;  ///< empty unless SimOptions::record_timeline
};

/// The size of the op-by-op run, known before anything is allocated: simulated ranks (one per stage,
/// or every EP rank of each stage under skewed routing) × passes of the pipeline order × layers per
/// stage. Memory and time grow with it.
struct SimulationSize {
  double simulated_ranks = 0;
  double microbatches = 0;
  double layers_per_stage = 0;
  double layer_passes = 0;  ///< simulated ranks × 2 × micro-batches × layers per stage
};
/// Far above real runs (DeepSeek-V3 on 1,024 GPUs with every EP rank simulated: ~10^6) and below
/// what exhausts memory (~40 bytes of schedule state per pass, more per op recorded for a trace).
inline constexpr double kMaxLayerPasses = 5e7;

[[nodiscard]] SimulationSize simulation_size(const Scenario& scenario);
/// Whether the scenario is small enough to simulate op by op (kMaxLayerPasses).
[[nodiscard]] bool simulation_fits(const Scenario& scenario);

/// Answers the scenario at fidelity "simulation". The scenario must have passed validate_layout. A
/// scenario too large to simulate is refused (InputError naming its size and the way out, fidelity
/// estimate) before any allocation.
[[nodiscard]] SimOutput simulate_step(const Scenario& scenario, const SimOptions& options = {});

}  // namespace moesim::sim
