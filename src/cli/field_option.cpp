#include "cli/field_option.hpp"

#include <string>

#include <fmt/format.h>

#include "cli/option_checks.hpp"
#include "core/error.hpp"
#include "scenario/field_lookup.hpp"

namespace moesim::cli {
namespace {

/// The entry, which must exist and name a flag: a missing one is a mistake in this program.
scenario_fields::FieldEntry with_flag(std::optional<scenario_fields::FieldEntry> entry, std::string_view what,
                                      std::string_view field_path) {
  if (!entry || entry->info.cli_flag.empty()) {
    throw InternalError(fmt::format("{} field {} has no command-line flag in its table", what, field_path));
  }
  return *entry;
}
scenario_fields::FieldEntry entry_with_flag(std::string_view field_path) {
  return with_flag(scenario_fields::find_field(field_path), "scenario", field_path);
}
scenario_fields::FieldEntry plan_entry_with_flag(std::string_view field_path) {
  return with_flag(scenario_fields::find_plan_request_field(field_path), "plan request", field_path);
}

std::string help(const scenario_fields::FieldEntry& e, std::string_view field_path) {
  return fmt::format("{} (scenario field {})", e.info.doc, field_path);
}

std::string plan_help(const scenario_fields::FieldEntry& e, std::string_view more_help) {
  std::string text(e.info.doc);
  if (!more_help.empty()) text += fmt::format("; {}", more_help);
  if (!e.info.derived_default.empty()) text += fmt::format(" (default {})", e.info.derived_default);
  return text;
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

CLI::Option* add_plan_field_option(CLI::App* app, std::string_view field_path, std::string& target,
                                   std::string_view more_help) {
  const auto e = plan_entry_with_flag(field_path);
  auto* option = app->add_option(std::string(e.info.cli_flag), target, plan_help(e, more_help));
  if (!e.names.empty()) option->check(CLI::IsMember(e.names))->capture_default_str();
  return option;
}

CLI::Option* add_plan_field_option(CLI::App* app, std::string_view field_path, std::int64_t& target) {
  const auto e = plan_entry_with_flag(field_path);
  if (!e.int_range) throw InternalError(fmt::format("plan request field {} is not an integer", field_path));
  return app->add_option(std::string(e.info.cli_flag), target, plan_help(e, {}))
      ->capture_default_str()
      ->check(CLI::Range(e.int_range->min, e.int_range->max));
}

CLI::Option* add_plan_field_option(CLI::App* app, std::string_view field_path, double& target) {
  const auto e = plan_entry_with_flag(field_path);
  if (!e.number_range || e.number_range->min_exclusive) {
    throw InternalError(fmt::format("plan request field {} is not a number with an inclusive range", field_path));
  }
  return app->add_option(std::string(e.info.cli_flag), target, plan_help(e, {}))
      ->check(finite_range(e.number_range->min, e.number_range->max));
}

ListField plan_list_field(std::string_view field_path) {
  const auto e = plan_entry_with_flag(field_path);
  if (!e.int_range) throw InternalError(fmt::format("plan request field {} is not a list of integers", field_path));
  return ListField{std::string(e.info.cli_flag), *e.int_range};
}

}  // namespace moesim::cli
