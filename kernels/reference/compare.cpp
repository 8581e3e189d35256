#include "kernels/reference/compare.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace moesim::kernels {

std::string Comparison::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "rel_l2 %.3e over %zu values (%zu not finite), worst [%zu] %.6g vs %.6g", rel_l2,
                count, nonfinite, worst, worst_got, worst_want);
  return buf;
}

Comparison compare(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) throw std::invalid_argument("compare: lengths differ");
  Comparison c;
  c.count = got.size();
  double err2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++c.nonfinite;
      continue;
    }
    const double d = got[i] - want[i];
    err2 += d * d;
    ref2 += want[i] * want[i];
    if (std::fabs(d) > c.max_abs || (c.max_abs == 0 && i == 0)) {
      c.max_abs = std::fabs(d);
      c.worst = i;
      c.worst_got = got[i];
      c.worst_want = want[i];
    }
  }
  c.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return c;
}

void require_close(const Comparison& c, double rel_l2_tolerance, const std::string& what) {
  if (c.ok(rel_l2_tolerance)) return;
  char tol[32];
  std::snprintf(tol, sizeof tol, "%.1e", rel_l2_tolerance);
  throw std::runtime_error(what + ": wrong result: " + c.describe() + " (tolerance " + tol + ")");
}

}  // namespace moesim::kernels
