#include "kernels/reference/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace moesim::kernels {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = percentile_sorted(samples, 0.5);
  s.p10 = percentile_sorted(samples, 0.1);
  s.p90 = percentile_sorted(samples, 0.9);
  s.min = samples.front();
  s.repeats = static_cast<int>(samples.size());
  return s;
}

}  // namespace moesim::kernels
