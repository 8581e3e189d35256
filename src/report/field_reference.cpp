#include "report/field_reference.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scenario/plan_request_fields.hpp"
#include "scenario/scenario_fields.hpp"

namespace moesim::report {
namespace {

struct Row {
  std::string key, type, default_value, allowed, meaning;
};

std::string range_text(IntRange r) { return fmt::format("{} to {}", r.min, r.max); }
std::string range_text(NumberRange r) {
  return fmt::format("{}{}, {}]", r.min_exclusive ? "(" : "[", r.min, r.max);
}

template <typename E, std::size_t N>
std::string names_text(const EnumNames<E, N>& table) {
  std::string out;
  for (const auto& entry : table) out += (out.empty() ? "" : ", ") + std::string(entry.name);
  return out;
}

/// What a field's default says when the struct's initializer is not it.
std::string default_text(const FieldInfo& info, const std::string& member_default) {
  if (info.required) return "required";
  if (!info.derived_default.empty()) return "= " + std::string(info.derived_default);
  return member_default;
}

std::string meaning_text(const FieldInfo& info) {
  std::string text(info.doc);
  if (!info.cli_flag.empty()) text += fmt::format(" (`moesim plan {}`)", info.cli_flag);
  return text;
}

/// Collects one object's rows; sections become tables of their own, after their parent's.
class ReferenceWriter {
 public:
  ReferenceWriter(std::string title, std::vector<std::pair<std::string, std::vector<Row>>>& tables)
      : title_(std::move(title)), tables_(tables) {
    index_ = tables_.size();
    tables_.emplace_back(title_, std::vector<Row>{});
  }

  template <typename Inner>
  void section(const FieldInfo& info, Inner&& inner) {
    const std::string path = child(info);
    add(info, "object", info.required ? "required" : "{}", fmt::format("the fields of `{}` below", path));
    ReferenceWriter writer(path, tables_);
    inner(writer);
  }
  void constant(const FieldInfo& info, std::string_view text) {
    add(info, "string", fmt::format("\"{}\"", text), fmt::format("\"{}\"", text));
  }
  void text(const FieldInfo& info, const std::string& member) { add(info, "string", fmt::format("\"{}\"", member), "any"); }
  template <typename T, typename... Derive>
  void integer(const FieldInfo& info, const T& member, IntRange range, Derive&&... /*derive*/) {
    add(info, "integer", fmt::format("{}", member), range_text(range));
  }
  void number(const FieldInfo& info, const double& member, NumberRange range) {
    add(info, "number", fmt::format("{}", member), range_text(range));
  }
  void optional_integer(const FieldInfo& info, const std::optional<std::int64_t>& /*unset*/, IntRange range) {
    add(info, "integer or null", "null", range_text(range));
  }
  void optional_number(const FieldInfo& info, const std::optional<double>& /*unset*/, NumberRange range) {
    add(info, "number or null", "null", range_text(range));
  }
  template <typename... Derive>
  void boolean(const FieldInfo& info, const bool& member, Derive&&... /*derive*/) {
    add(info, "boolean", member ? "true" : "false", "true, false");
  }
  template <typename E, std::size_t N>
  void enumeration(const FieldInfo& info, const E& member, const EnumNames<E, N>& table) {
    add(info, "string", fmt::format("\"{}\"", name_of(table, member)), names_text(table));
  }
  void special(const FieldInfo& info, const model::ModelSpec& /*member*/) {
    add(info, "string or object", "required", "a preset (`moesim models list`) or a definition");
  }
  void special(const FieldInfo& info, const hw::SystemSpec& /*member*/) {
    add(info, "object", "required", "docs/topology.md");
  }
  void special(const FieldInfo& info, const RecomputeSpec& /*member*/) {
    add(info, "string or object", "\"none\"", "none, selective, full, or an object");
  }
  void special(const FieldInfo& info, const RoutingSpec& /*member*/) {
    add(info, "object", "{\"distribution\": \"balanced\"}", "docs/routing.md");
  }
  void special(const FieldInfo& info, const std::optional<RoutingSpec>& /*member*/) {
    add(info, "object or null", "null", "as `moe.routing` (docs/routing.md)");
  }
  void special(const FieldInfo& info, const std::vector<CudaGraphScope>& /*member: none*/) {
    add(info, "string or array of string", "\"none\"", "none, or each one of " + names_text(kCudaGraphScopeNames));
  }
  void special(const FieldInfo& info, const RuntimeHost& /*member*/) {
    add(info, "string or number", "", names_text(hw::kHostKindNames) + ", or a number in " +
                                          range_text(scenario_fields::kRelativeHostSpeed));
  }
  // The plan request's fields (scenario/plan_request_fields.hpp).
  void special(const FieldInfo& info, const Scenario& /*member*/) {
    add(info, "object", "required", "a scenario (the tables above)");
  }
  void special(const FieldInfo& info, const std::vector<RecomputeSpec>& /*member*/) {
    add(info, "array of string or object", "", "each as the scenario's `recompute`");
  }
  template <typename T>
  void integer_list(const FieldInfo& info, const T& /*member*/, IntRange range) {
    add(info, "array of integer", "", "each " + range_text(range));
  }
  template <typename E, std::size_t N>
  void enumeration_list(const FieldInfo& info, const std::vector<E>& member, const EnumNames<E, N>& table) {
    std::string defaults;
    for (const E e : member) defaults += (defaults.empty() ? "[" : ", ") + fmt::format("\"{}\"", name_of(table, e));
    add(info, "array of string", member.empty() ? std::string() : defaults + "]", "each one of " + names_text(table));
  }

 private:
  [[nodiscard]] std::string child(const FieldInfo& info) const {
    return title_.empty() ? std::string(info.key) : title_ + "." + std::string(info.key);
  }
  void add(const FieldInfo& info, std::string type, std::string member_default, std::string allowed) {
    tables_[index_].second.push_back(
        Row{child(info), std::move(type), default_text(info, member_default), std::move(allowed), meaning_text(info)});
  }

  std::string title_;
  std::vector<std::pair<std::string, std::vector<Row>>>& tables_;
  std::size_t index_ = 0;
};

/// `|` inside a cell would end it.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

namespace {

std::string tables_text(const std::vector<std::pair<std::string, std::vector<Row>>>& tables, std::string_view prefix) {
  std::string out;
  for (const auto& [title, rows] : tables) {
    const std::string shown =
        title.empty() ? std::string(prefix) : prefix.empty() ? title : std::string(prefix) + "." + title;
    out += fmt::format("\n## {}\n\n| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n",
                       shown.empty() ? std::string("top level") : "`" + shown + "`");
    for (const auto& r : rows) {
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.key, r.type, cell(r.default_value), cell(r.allowed),
                         cell(r.meaning));
    }
  }
  return out;
}

}  // namespace

std::string scenario_field_reference() {
  std::vector<std::pair<std::string, std::vector<Row>>> tables;
  const Scenario defaults;
  {
    ReferenceWriter writer("", tables);
    scenario_fields::visit_scenario(writer, defaults);
  }
  std::string out =
      "# Scenario fields (moesim.scenario/1)\n\n"
      "Generated from the field tables (`src/scenario/scenario_fields.hpp`) by `build/moesim scenarios fields`;\n"
      "`tests/report/field_reference_test.cpp` fails when this page and the tables differ. The contract is\n"
      "`../shared/spec/scenario.md`. Unknown keys, wrong types and values outside the allowed range are refused\n"
      "(exit 2) naming the file, the JSON path, the value, the rule and the allowed values; null reads as absent.\n";
  out += tables_text(tables, "");
  std::vector<std::pair<std::string, std::vector<Row>>> request_tables;
  const PlanRequest request_defaults;
  {
    ReferenceWriter writer("", request_tables);
    plan_request_fields::visit_plan_request(writer, request_defaults);
  }
  out +=
      "\n# Plan request fields (`request` of moesim.plan/1)\n\n"
      "Generated from `src/scenario/plan_request_fields.hpp`. A plan written with `--json` echoes its request with\n"
      "the space it searched filled in; `moesim merge` and `--resume` read it back, so in a file every list of\n"
      "`space` is required. On the command line each list is a flag (`moesim plan --help`) and an omitted one\n"
      "takes the planner's default (the default column).\n";
  out += tables_text(request_tables, "request");
  return out;
}

}  // namespace moesim::report
