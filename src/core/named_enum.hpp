#pragma once
// One {value, name} table per enum, declared next to the enum: its spelling in input files, results
// and messages is then written once, and to_string, parsing and the "allowed values" list of an error
// message all read the same table instead of a switch and an if-chain that must agree by hand.
//
//   inline constexpr auto kTierNames = std::to_array<EnumName<Tier>>({{Tier::kA, "a"}, {Tier::kB, "b"}});
//   name_of(kTierNames, Tier::kB) == "b";  value_of(kTierNames, "a") == Tier::kA;  names_of(kTierNames)
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace moesim {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

template <typename E, std::size_t N>
using EnumNames = std::array<EnumName<E>, N>;

/// The name of `value`; `unknown` for a value the table lacks (only an integer cast can make one).
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::string_view name_of(const EnumNames<E, N>& table, E value,
                                                 std::string_view unknown = "?") {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return unknown;
}

/// The value spelled exactly `name` (case-sensitive), or nullopt.
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> value_of(const EnumNames<E, N>& table, std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  return std::nullopt;
}

/// Every value, in table order (for enums whose callers iterate over all values).
template <typename E, std::size_t N>
[[nodiscard]] constexpr std::array<E, N> values_of(const EnumNames<E, N>& table) {
  std::array<E, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = table[i].value;
  return out;
}

/// Every name, in table order: the allowed list a strict reader checks against and an error message shows.
template <typename E, std::size_t N>
[[nodiscard]] std::vector<std::string> names_of(const EnumNames<E, N>& table) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const auto& entry : table) out.emplace_back(entry.name);
  return out;
}

}  // namespace moesim
