#include "cli/field_option.hpp"

#include <string>

#include <fmt/format.h>

#include "cli/option_checks.hpp"
#include "core/error.hpp"
#include "scenario/field_lookup.hpp"

namespace moesim::cli {
namespace {

/// The entry, which must exist and name a flag: a missing one is a mistake in this program.
scenario_fields::FieldEntry entry_with_flag(std::string_view field_path) {
  auto entry = scenario_fields::find_field(field_path);
  if (!entry || entry->info.cli_flag.empty()) {
    throw InternalError(fmt::format("scenario field {} has no command-line flag in its table", field_path));
  }
  return *entry;
}

std::string help(const scenario_fields::FieldEntry& e, std::string_view field_path) {
  return fmt::format("{} (scenario field {})", e.info.doc, field_path);
}

}  // namespace

CLI::Option* add_field_option(CLI::App* app, std::string_view field_path, std::int64_t& target) {
  const auto e = entry_with_flag(field_path);
  if (!e.int_range) throw InternalError(fmt::format("scenario field {} is not an integer", field_path));
  return app->add_option(std::string(e.info.cli_flag), target, help(e, field_path))
      ->check(CLI::Range(e.int_range->min, e.int_range->max));
}

CLI::Option* add_field_option(CLI::App* app, std::string_view field_path, double& target) {
  const auto e = entry_with_flag(field_path);
  // finite_range is inclusive: an exclusive lower bound would need its own check.
  if (!e.number_range || e.number_range->min_exclusive) {
    throw InternalError(fmt::format("scenario field {} is not a number with an inclusive range", field_path));
  }
  return app->add_option(std::string(e.info.cli_flag), target, help(e, field_path))
      ->check(finite_range(e.number_range->min, e.number_range->max));
}

}  // namespace moesim::cli
