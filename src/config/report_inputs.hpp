#pragma once
// What `moesim report IN.json` needs besides the document itself: the scenario it answers (a result's
// `scenario`, a plan's `request.scenario`), from which the CLI rebuilds the cluster's topology graph
// (cli/report_topology).
#include <optional>
#include <string>
#include <string_view>

#include "scenario/scenario.hpp"

namespace moesim::config {

/// The scenario of a moesim.result/1 or moesim.plan/1 document, or nullopt when the document carries
/// none that loads (the page is drawn without the topology graph then).
[[nodiscard]] std::optional<Scenario> scenario_of_document(std::string_view text, const std::string& path);

}  // namespace moesim::config
