#include "sim/step_simulator.hpp"

#include "sim/step_simulation.hpp"

namespace moesim::sim {

SimOutput simulate_step(const Scenario& scenario, const SimOptions& options) {
  detail::StepSimulation sim(scenario, options);
  return sim.run();
}

}  // namespace moesim::sim
