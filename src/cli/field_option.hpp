#pragma once
// A scenario field offered as a `moesim plan` flag: the flag's name, help and range come from the
// field's table entry (scenario/scenario_fields.hpp), so the CLI spells none of them again.
#include <cstdint>
#include <string_view>

#include <CLI/CLI.hpp>

namespace moesim::cli {

/// Adds the flag of the integer field at `field_path` ("training.seq_length" → --seq), checked
/// against the field's range.
CLI::Option* add_field_option(CLI::App* app, std::string_view field_path, std::int64_t& target);
/// As above for a number field: a finite value in the field's range.
CLI::Option* add_field_option(CLI::App* app, std::string_view field_path, double& target);

}  // namespace moesim::cli
