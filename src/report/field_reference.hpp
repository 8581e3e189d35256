#pragma once
// The scenario field reference (docs/scenario-fields.md), written from the field tables
// (scenario/scenario_fields.hpp): every key with its type, default, allowed values and meaning.
// `moesim scenarios fields` prints it; tests/report/field_reference_test.cpp keeps the checked-in page
// equal to it.
#include <string>

namespace moesim::report {

/// Markdown: one table per object of the scenario, in the loader's reading order.
[[nodiscard]] std::string scenario_field_reference();

}  // namespace moesim::report
