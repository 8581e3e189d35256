#pragma once
// The topology graph an HTML report draws, rebuilt from the scenario the report answers.
#include <optional>

#include "hw/tier_graph.hpp"
#include "scenario/scenario.hpp"

namespace moesim::cli {

/// NVLink domains and switches of the scenario's cluster; nullopt when its topology cannot be
/// rebuilt (a topology file that moved): the page then says so instead of drawing it.
[[nodiscard]] std::optional<hw::TierGraph> report_topology(const Scenario& s);

}  // namespace moesim::cli
