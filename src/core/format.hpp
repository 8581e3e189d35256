#pragma once
// Small formatting helpers shared by error messages and tables.
#include <string>
#include <vector>

namespace moesim {

/// "a, b, c" — used for the "allowed:" part of error messages.
[[nodiscard]] std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");
/// " (did you mean \"x\"?)" naming the candidates closest to `name` by edit distance (up to three
/// equally close), when they are close enough to be a typo (at most a third of its letters off, at
/// least 1) or start with `name`; "" otherwise.
[[nodiscard]] std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);
/// Shortest round-trip text of a double ("0.5", "1e+30"), as written in messages.
[[nodiscard]] std::string format_number(double v);

}  // namespace moesim
