#pragma once
// Inclusive bounds of an integer or number field: declared with the field (scenario/scenario_fields.hpp,
// config/*_limits.hpp) and enforced by config/'s strict reader, the CLI's option checks and the
// generated field reference alike.
#include <cstdint>
#include <limits>

namespace moesim {

/// Inclusive bounds of an integer field. The upper bounds keep absurd inputs (10^12 GPUs) from
/// reaching any allocation.
struct IntRange {
  std::int64_t min = 1;
  std::int64_t max = std::numeric_limits<std::int32_t>::max();
};

struct NumberRange {
  double min = 0;
  double max = std::numeric_limits<double>::max();
  bool min_exclusive = false;  ///< true: value must be > min
};

}  // namespace moesim
