#pragma once
// A scenario or plan request field offered as a `moesim plan` flag: the flag's name, help and range
// come from the field's table entry (scenario/scenario_fields.hpp, scenario/plan_request_fields.hpp),
// so the CLI spells none of them again.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/value_range.hpp"

#include <CLI/CLI.hpp>

namespace moesim::cli {

/// Adds the flag of the integer field at `field_path` ("training.seq_length" → --seq), checked
/// against the field's range.
CLI::Option* add_field_option(CLI::App* app, std::string_view field_path, std::int64_t& target);
/// As above for a number field: a finite value in the field's range.
CLI::Option* add_field_option(CLI::App* app, std::string_view field_path, double& target);

/// The flag of plan request field `field_path` ("space.tp" → --tp, "objective"): a list knob's text
/// ("1,2,4"), parsed by cli/plan_args; an enumeration field is checked against its names. `more_help`
/// follows the table's meaning (the list syntax a flag accepts beyond its names).
CLI::Option* add_plan_field_option(CLI::App* app, std::string_view field_path, std::string& target,
                                   std::string_view more_help = {});
/// An integer or number plan request field ("top", "token_budget"), checked against its range.
CLI::Option* add_plan_field_option(CLI::App* app, std::string_view field_path, std::int64_t& target);
CLI::Option* add_plan_field_option(CLI::App* app, std::string_view field_path, double& target);
/// The flag and the range of each value of integer-list field `field_path`, for parsing the list.
struct ListField {
  std::string flag;
  IntRange range;
};
[[nodiscard]] ListField plan_list_field(std::string_view field_path);

}  // namespace moesim::cli
