#pragma once
// The accuracy bounds issue 4 sets (docs/accuracy.md "The bounds"): MAPE <= 10 % on the dense public
// groups, <= 15 % on the public MoE points, each over a slice of the published points. One table, so
// that `moesim accuracy` prints exactly what tests/accuracy/accuracy_test.cpp asserts.
#include <string>
#include <vector>

#include "accuracy/accuracy.hpp"

namespace moesim::accuracy {

/// A slice of one source group: every point of it, or the points whose subgroup ("model/gpu") starts
/// with `model_prefix` and ends with "/" + `gpu`.
struct BoundSlice {
  std::string name;  ///< as docs/accuracy.md's table names it
  std::string group;
  std::string model_prefix;  ///< empty: the whole group
  std::string gpu;
  double max_mape = 0;
  [[nodiscard]] bool contains(const PublishedPoint& p) const;
};

/// The slices of issue 4's must-show 2, in docs/accuracy.md's order.
[[nodiscard]] const std::vector<BoundSlice>& issue_bounds();

struct BoundOutcome {
  const BoundSlice* slice = nullptr;
  std::vector<const PointOutcome*> outcomes;  ///< the slice's points that ran, report order
  double mape = 0;
  double bias = 0;  ///< mean speed_error of the slice's points: > 0 optimistic
  [[nodiscard]] int points() const { return static_cast<int>(outcomes.size()); }
  [[nodiscard]] bool met() const { return !outcomes.empty() && mape <= slice->max_mape; }
};

/// Each slice over the report's outcomes; slices with no point in the report (another --group or
/// --point) are left out. The outcomes point into `report` and `slices`, which must outlive them.
[[nodiscard]] std::vector<BoundOutcome> evaluate_bounds(const AccuracyReport& report,
                                                        const std::vector<BoundSlice>& slices = issue_bounds());

}  // namespace moesim::accuracy
