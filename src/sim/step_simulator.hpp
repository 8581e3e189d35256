#pragma once
// Fidelity "simulation": one optimizer step run op by op on the discrete-event engine. Every
// simulated rank executes its pipeline schedule (1F1B or interleaved) with the kernels and blocking
// collectives of each layer; pipeline sends, data-parallel gradient reduce-scatters and parameter
// all-gathers run on their own streams and overlap compute; every transfer is a flow on the
// rank's NVLink and network ports, so concurrent traffic shares bandwidth (max-min fair).
// Bubbles, exposed communication and the critical rank come out of the run.
#include <cstdint>
#include <functional>

#include "record/result.hpp"
#include "record/timeline.hpp"

namespace moesim::sim {

struct SimOptions {
  bool record_timeline = false;  ///< fill SimOutput::timeline (op-level events for the trace)
  /// Under an EPLB placement (scenario moe.placement), the draws its window sums: this many
  /// micro-batches spread over the interval before (moe/placement_window: fresh draws around that
  /// interval's popularity, which differs from this step's under per_step_variation), never the draws
  /// it is judged on. 0 places from the exact popularity the step's draws are made around: an oracle
  /// no balancer has, for comparison.
  std::int64_t placement_window_microbatches = 16;
  /// Polled every few tens of thousands of events: true stops the run with StoppedError (Ctrl-C).
  std::function<bool()> stop_requested;
  /// Told (pipeline passes done, passes in all) as often as stop_requested is polled.
  std::function<void(double done, double total)> progress;
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
/// Ten times the real runs (DeepSeek-V3 on 1,024 GPUs with every EP rank simulated: ~10^6 layer
/// passes, 8 s on one core), so that an accepted simulation ends within minutes (it runs at roughly
/// 2·10^4 layer passes a second under skew, showing its progress), and far below what exhausts memory
/// (~40 bytes of schedule state per pass, more per op recorded for a trace). Beyond it,
/// `--fidelity estimate` answers.
inline constexpr double kMaxLayerPasses = 1e7;

[[nodiscard]] SimulationSize simulation_size(const Scenario& scenario);
/// Whether the scenario is small enough to simulate op by op (kMaxLayerPasses).
[[nodiscard]] bool simulation_fits(const Scenario& scenario);

/// Answers the scenario at fidelity "simulation". The scenario must have passed validate_layout. A
/// scenario too large to simulate is refused (InputError naming its size and the way out, fidelity
/// estimate) before any allocation.
[[nodiscard]] SimOutput simulate_step(const Scenario& scenario, const SimOptions& options = {});

}  // namespace moesim::sim
