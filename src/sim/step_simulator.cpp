#include "sim/step_simulator.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "schedule/step_shape.hpp"
#include "sim/step_simulation.hpp"

namespace moesim::sim {

// In doubles: the factors are each bounded by the scenario limits, their product is not (2^77).
SimulationSize simulation_size(const Scenario& s) {
  SimulationSize z;
  z.simulated_ranks = static_cast<double>(s.parallel.pp) * static_cast<double>(schedule::routing_skewed(s) ? s.parallel.ep : 1);
  z.microbatches = static_cast<double>(s.num_microbatches());
  z.layers_per_stage = static_cast<double>((s.model.num_layers + s.parallel.pp - 1) / s.parallel.pp);
  z.layer_passes = z.simulated_ranks * 2.0 * z.microbatches * std::max(z.layers_per_stage, 1.0);
  return z;
}

bool simulation_fits(const Scenario& s) { return simulation_size(s).layer_passes <= kMaxLayerPasses; }

SimOutput simulate_step(const Scenario& scenario, const SimOptions& options) {
  const SimulationSize z = simulation_size(scenario);
  if (z.layer_passes > kMaxLayerPasses) {
    throw InputError("/parallel",
                     fmt::format("{:.0f} simulated ranks × 2 × {:.0f} micro-batches × {:.0f} layers per stage = {:.3g} "
                                 "layer passes",
                                 z.simulated_ranks, z.microbatches, z.layers_per_stage, z.layer_passes),
                     fmt::format("too large to simulate op by op (at most {:.0e} layer passes)", kMaxLayerPasses),
                     "fidelity estimate, or fewer pipeline stages, micro-batches per step or (under skewed routing) EP ranks");
  }
  detail::StepSimulation sim(scenario, options);
  return sim.run();
}

}  // namespace moesim::sim
