#include "program/host_gate.hpp"

#include <algorithm>

namespace moesim::program {
namespace {
double plus(double a, double b) { return a <= HostGate::kNone || b <= HostGate::kNone ? HostGate::kNone : a + b; }
}  // namespace

HostGate HostGate::then(const HostGate& n) const {
  HostGate r;
  r.gg = std::max(plus(n.gg, gg), plus(n.gh, hg));
  r.gh = std::max(plus(n.gg, gh), plus(n.gh, hh));
  r.hg = std::max(plus(n.hg, gg), plus(n.hh, hg));
  r.hh = std::max(plus(n.hg, gh), plus(n.hh, hh));
  return r;
}

HostGate HostGate::repeated(std::int64_t times) const {
  HostGate result;  // identity
  HostGate square = *this;
  while (times > 0) {
    if (times & 1) result = result.then(square);
    square = square.then(square);
    times >>= 1;
  }
  return result;
}

double HostGate::gpu_end() const { return std::max({gg, gh, 0.0}); }

}  // namespace moesim::program
