#pragma once
// The host and the GPU stream of one rank in closed form. The host issues the ops in order, each
// after its `host_s`; the GPU runs each op once the previous one is done and the host has issued it;
// at a `host_sync` op the host first waits for the GPU. Both clocks after a run of ops are max-plus
// linear in both clocks before it, so a run of ops is a 2×2 max-plus matrix, runs compose by the
// max-plus product and m micro-batches are a matrix power: the estimate's host time in O(ops + log m),
// the same recurrence the simulation steps through op by op (tests/program/host_gate_test.cpp).
#include <cstdint>

namespace moesim::program {

/// (gpu', host') = (max(gg + gpu, gh + host), max(hg + gpu, hh + host)); −∞ where a clock does not
/// depend on the other.
struct HostGate {
  double gg = 0, gh = kNone, hg = kNone, hh = 0;
  static constexpr double kNone = -1e300;

  /// This run, then `next`.
  [[nodiscard]] HostGate then(const HostGate& next) const;
  /// `times` runs of this one back to back (times ≥ 0; 0 is the identity).
  [[nodiscard]] HostGate repeated(std::int64_t times) const;
  /// When the GPU finishes, both clocks starting at 0.
  [[nodiscard]] double gpu_end() const;
};

/// The gate of a run of ops (program::LayerOp: `seconds` on the GPU, `host_s`, `host_sync`).
template <class Ops>
[[nodiscard]] HostGate host_gate(const Ops& ops) {
  HostGate g;
  for (const auto& op : ops) {
    if (op.host_sync) g = g.then({0.0, HostGate::kNone, 0.0, 0.0});  // host' = max(host, gpu)
    // Issue: host' = host + h; run: gpu' = max(gpu, host') + d.
    g = g.then({op.seconds, op.host_s + op.seconds, HostGate::kNone, op.host_s});
  }
  return g;
}

}  // namespace moesim::program
