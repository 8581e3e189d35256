#pragma once
// Strict reads of an enum field through the enum's name table (core/named_enum.hpp): the allowed
// list a bad value's message shows and the value returned come from the one table.
#include <cstddef>
#include <string>
#include <string_view>

#include "config/json_reader.hpp"
#include "core/named_enum.hpp"

namespace moesim::config {

/// The value of required field `key`, which must be one of the table's names.
template <typename E, std::size_t N>
[[nodiscard]] E require_enum_value(const ObjectReader& r, std::string_view key, const EnumNames<E, N>& table) {
  return *value_of(table, r.require_enum(key, names_of(table)));
}

/// As require_enum_value, `fallback` when the field is absent or null.
template <typename E, std::size_t N>
[[nodiscard]] E get_enum_value(const ObjectReader& r, std::string_view key, E fallback, const EnumNames<E, N>& table) {
  return *value_of(table, r.get_enum(key, std::string(name_of(table, fallback)), names_of(table)));
}

}  // namespace moesim::config
