#pragma once
// One field's table entry found by its dotted path: a scenario field ("training.seq_length") or a
// plan request field ("space.tp", "top"). What the CLI needs to offer the field as a flag (name, help,
// range) without spelling any of them again.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/plan_request_fields.hpp"
#include "scenario/scenario_fields.hpp"

namespace moesim::scenario_fields {

struct FieldEntry {
  FieldInfo info;
  std::optional<IntRange> int_range;       ///< integer fields
  std::optional<NumberRange> number_range;  ///< number fields
  std::vector<std::string> names;           ///< enumeration fields: the allowed names, in table order
};

namespace detail {

/// Visits the tables and keeps the entry whose dotted path is `wanted`.
class FieldFinder {
 public:
  FieldFinder(std::string_view wanted, std::string prefix, std::optional<FieldEntry>& found)
      : wanted_(wanted), prefix_(std::move(prefix)), found_(found) {}

  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    FieldFinder finder(wanted_, path(info) + ".", found_);
    inner(finder);
  }
  template <typename... A> void special(const FieldInfo& info, A&&...) { keep(info); }
  template <typename... A> void constant(const FieldInfo& info, A&&...) { keep(info); }
  template <typename... A> void text(const FieldInfo& info, A&&...) { keep(info); }
  template <typename T, typename... A>
  void integer(const FieldInfo& info, const T& /*member*/, IntRange range, A&&...) { keep(info, range); }
  template <typename T>
  void optional_integer(const FieldInfo& info, const T& /*member*/, IntRange range) { keep(info, range); }
  template <typename T>
  void number(const FieldInfo& info, const T& /*member*/, NumberRange range) { keep(info, std::nullopt, range); }
  template <typename T>
  void optional_number(const FieldInfo& info, const T& /*member*/, NumberRange range) { keep(info, std::nullopt, range); }
  template <typename... A> void boolean(const FieldInfo& info, A&&...) { keep(info); }
  template <typename T, typename E, std::size_t N>
  void enumeration(const FieldInfo& info, const T& /*member*/, const EnumNames<E, N>& table) {
    keep(info);
    if (found_ && path(info) == wanted_) found_->names = names_of(table);
  }
  template <typename T>
  void integer_list(const FieldInfo& info, const T& /*member*/, IntRange range) { keep(info, range); }
  template <typename... A> void enumeration_list(const FieldInfo& info, A&&...) { keep(info); }

 private:
  [[nodiscard]] std::string path(const FieldInfo& info) const { return prefix_ + std::string(info.key); }
  void keep(const FieldInfo& info, std::optional<IntRange> ints = std::nullopt,
            std::optional<NumberRange> numbers = std::nullopt) {
    if (path(info) == wanted_) found_ = FieldEntry{info, ints, numbers, {}};
  }

  std::string_view wanted_;
  std::string prefix_;
  std::optional<FieldEntry>& found_;
};

}  // namespace detail

/// The entry of the field at `dotted_path`, or nullopt when the tables have none.
[[nodiscard]] inline std::optional<FieldEntry> find_field(std::string_view dotted_path) {
  std::optional<FieldEntry> found;
  const Scenario defaults;
  detail::FieldFinder finder(dotted_path, "", found);
  visit_scenario(finder, defaults);
  return found;
}

/// The entry of the plan request field at `dotted_path` ("space.tp", "top"), or nullopt.
[[nodiscard]] inline std::optional<FieldEntry> find_plan_request_field(std::string_view dotted_path) {
  std::optional<FieldEntry> found;
  const PlanRequest defaults;
  detail::FieldFinder finder(dotted_path, "", found);
  plan_request_fields::visit_plan_request(finder, defaults);
  return found;
}

}  // namespace moesim::scenario_fields
