#pragma once
// Small formatting helpers shared by error messages and tables.
#include <string>
#include <vector>

namespace moesim {

/// "a, b, c" — used for the "allowed:" part of error messages.
[[nodiscard]] std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
/// Shortest round-trip text of a double ("0.5", "1e+30"), as written in messages.
[[nodiscard]] std::string format_number(double v);

}  // namespace moesim
