#include "cli/report_topology.hpp"

#include "config/report_inputs.hpp"
#include "core/error.hpp"

namespace moesim::cli {

std::optional<hw::TierGraph> report_topology(const Scenario& s) {
  try {
    return hw::tier_graph(config::topology_of(s));
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace moesim::cli
