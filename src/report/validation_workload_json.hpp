#pragma once
// `moesim validate --workload`: what the proxy runner executes (moesim.validation-workload/1,
// docs/validation.md), read back by config/validation_workload_loader.
#include <string>

#include "record/validation_workload.hpp"

namespace moesim::report {

/// The workload as JSON text: keys in a fixed order, each source row of routed_copies on one line.
[[nodiscard]] std::string validation_workload_to_json_text(const ValidationWorkload& w);

}  // namespace moesim::report
