#pragma once
// A NaN or an infinity in an output is a bug upstream: JSON would silently turn it into null, so the
// writers refuse it, naming the document and the field.
#include <cmath>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace moesim::report {

/// `v` when finite; else InternalError "<document> field <field> is not finite".
[[nodiscard]] inline double finite_number(double v, std::string_view document, std::string_view field) {
  if (!std::isfinite(v)) {
    throw InternalError(std::string(document) + " field " + std::string(field) + " is not finite");
  }
  return v;
}

}  // namespace moesim::report
