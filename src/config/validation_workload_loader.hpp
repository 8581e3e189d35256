#pragma once
// Reads what the proxy runner executes (moesim.validation-workload/1, docs/validation.md) strictly:
// unknown keys, wrong types, values out of range, a layout that does not add up, and routed copies of
// the wrong shape or whose source rows do not hold tokens_per_rank × topk copies (none above
// tokens_per_rank) are refused with the file, JSON path, value, rule and allowed values.
#include <string>

#include "record/validation_workload.hpp"

namespace moesim::config {

[[nodiscard]] ValidationWorkload parse_validation_workload(const std::string& text, const std::string& file);
[[nodiscard]] ValidationWorkload load_validation_workload(const std::string& path);

}  // namespace moesim::config
