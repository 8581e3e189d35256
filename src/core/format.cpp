#include "core/format.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace moesim {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

std::string format_number(double v) { return fmt::format("{}", v); }

namespace {
// Levenshtein distance, case-insensitive (preset names are lower case; people type "H100").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  // Names are short; a longer input (a mistyped path) is no preset's typo.
  if (name.empty() || name.size() > 64) return "";
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
  std::vector<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d > limit) continue;
    if (d < best_distance) {
      best.clear();
      best_distance = d;
    }
    if (d == best_distance) best.push_back(c);
  }
  // "h100" for "h100-sxm": a short name that starts a preset's is a typo of it too.
  if (best.empty()) {
    for (const std::string& c : candidates) {
      if (c.size() > name.size() && edit_distance(name, c.substr(0, name.size())) == 0) best.push_back(c);
    }
  }
  // Equally close names are all offered ("dgx-h100": "dgx-a100" or "hgx-h100"), a few at most.
  if (best.empty() || best.size() > 3) return "";
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < best.size(); ++i) {
    if (i > 0) text += i + 1 == best.size() ? " or " : ", ";
    text += "\"" + best[i] + "\"";
  }
  return text + "?)";
}

}  // namespace moesim
