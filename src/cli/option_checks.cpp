#include "cli/option_checks.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace moesim::cli {

CLI::Validator finite_range(double min, double max) {
  // CLI11 puts "--option: " before the text, and app.cpp turns that into moesim's one-line form:
  // "at --option: value nan: not a finite number; allowed: numbers from 0 to 1".
  const std::string allowed = fmt::format("; allowed: numbers from {} to {}", min, max);
  return CLI::Validator(
      [min, max, allowed](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return "value " + text + ": not a number" + allowed;
        if (!std::isfinite(v)) return "value " + text + ": not a finite number" + allowed;
        if (v < min || v > max) return "value " + text + ": out of range" + allowed;
        return {};
      },
      fmt::format("FLOAT in [{} - {}]", min, max));
}

}  // namespace moesim::cli
