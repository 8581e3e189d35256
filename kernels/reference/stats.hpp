#pragma once
// Summaries of repeated timings: the profile keeps the median and the p90 - p10 spread.
#include <vector>

namespace moesim::kernels {

struct Summary {
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double min = 0;
  int repeats = 0;
  [[nodiscard]] double spread() const { return p90 - p10; }
};

/// Percentile of sorted samples with linear interpolation between neighbours (numpy's default):
/// p in [0, 1]. Requires a non-empty, sorted vector.
[[nodiscard]] double percentile_sorted(const std::vector<double>& sorted, double p);

/// Median, p10, p90 and minimum of `samples` (any order); all zero for an empty vector.
[[nodiscard]] Summary summarize(std::vector<double> samples);

}  // namespace moesim::kernels
