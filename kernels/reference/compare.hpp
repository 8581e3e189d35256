#pragma once
// How far a kernel's output is from its reference: ||got - want|| / ||want|| over the compared
// elements (the norm METHOD.md asks for), the worst single element, and any non-finite value
// (a NaN never passes, and poisoned outputs that were never written read back as NaN).
#include <cstddef>
#include <string>
#include <vector>

namespace moesim::kernels {

struct Comparison {
  std::size_t count = 0;
  std::size_t nonfinite = 0;   ///< elements of `got` that are NaN or infinite
  double rel_l2 = 0;           ///< ||got - want||_2 / ||want||_2 (absolute norm when want is all zero)
  double max_abs = 0;          ///< largest |got - want|
  std::size_t worst = 0;       ///< index of that element
  double worst_got = 0;
  double worst_want = 0;

  /// True when every element is finite and rel_l2 <= tolerance.
  [[nodiscard]] bool ok(double rel_l2_tolerance) const { return nonfinite == 0 && rel_l2 <= rel_l2_tolerance; }
  /// One line for logs and exceptions: "rel_l2 3.1e-03 over 4096 values, worst [17] 0.52 vs 0.53".
  [[nodiscard]] std::string describe() const;
};

/// Compares equal-length vectors; throws std::invalid_argument when the lengths differ.
[[nodiscard]] Comparison compare(const std::vector<double>& got, const std::vector<double>& want);

/// Throws std::runtime_error("<what>: wrong result: <describe()> (tolerance t)") unless ok(tolerance).
void require_close(const Comparison& c, double rel_l2_tolerance, const std::string& what);

}  // namespace moesim::kernels
