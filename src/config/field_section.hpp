#pragma once
// A section of a field table read strictly: its allowed keys from the table (scenario/field_keys.hpp),
// a missing required section refused naming its required keys (else what it holds), an absent optional one read as {} so
// that its derived defaults still apply. Shared by the scenario and plan request readers.
#include <string>
#include <utility>

#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "scenario/field_keys.hpp"

namespace moesim::config {

/// Calls read(sub) with an ObjectReader over the section `info.key` of `parent`; `inner(visitor)`
/// visits the section's fields.
template <typename Inner, typename Read>
void read_field_section(const ObjectReader& parent, const FieldInfo& info, Inner&& inner, Read&& read) {
  FieldKeys table;
  inner(table);
  const Json* value = parent.get(info.key);
  if (!value && info.required) {
    std::string allowed = "{";
    for (const auto& key : table.required) allowed += "\"" + key + "\", ";
    throw InputError(parent.path_of(info.key), "", "required field is missing",
                     table.required.empty() ? std::string(info.doc) : allowed + "...}");
  }
  static const Json kEmpty = Json::object();
  const ObjectReader sub(value ? *value : kEmpty, parent.path_of(info.key), table.keys);
  std::forward<Read>(read)(sub);
}

}  // namespace moesim::config
