#include "core/format.hpp"

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

}  // namespace moesim
