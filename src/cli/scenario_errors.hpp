#pragma once
// Errors about a scenario that surface after it loaded (the simulation refusing its size, a device
// limit too costly to enumerate, a proxy it cannot build) must name its file like a loader error.
#include <string>

#include "core/error.hpp"

namespace moesim::cli {

/// Runs `work`, which reads the scenario loaded from `file`. An InputError about the scenario's
/// content (a JSON path such as /moe/routing/...) gets the file; one about a command-line option
/// (--gpus) does not, as the file is not what is wrong.
template <class Work>
auto naming_scenario_file(const std::string& file, Work&& work) -> decltype(work()) {
  try {
    return work();
  } catch (InputError& e) {
    if (!e.json_path().empty() && e.json_path().front() == '/') e.in_file(file);
    throw;
  }
}

}  // namespace moesim::cli
