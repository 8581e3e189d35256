#pragma once
// What the host pays to launch work, per host kind: the seconds one framework-level op costs the CPU
// in an eager Megatron-Core + Transformer Engine step (Python, the PyTorch dispatcher, autograd
// bookkeeping and the CUDA launch of its kernel). program/host_ops counts the framework ops of every
// kernel and collective; these figures turn the counts into time. They are the project's fitted
// constants (calibrate/fitted/constants.json, written by `moesim accuracy --fit`, one per host kind,
// with the points they came from); config fills them in every scenario it reads.
#include <array>
#include <cstddef>

#include "hw/host_kind.hpp"

namespace moesim::hw {

struct HostCosts {
  /// Seconds of host time per framework op, indexed by HostKind. 0 for a kind: its host is not priced
  /// (a scenario built in code without config; config always fills both).
  std::array<double, kHostKindNames.size()> framework_op_s{};

  [[nodiscard]] double op_seconds(HostKind kind) const { return framework_op_s[static_cast<std::size_t>(kind)]; }
  void set(HostKind kind, double seconds) { framework_op_s[static_cast<std::size_t>(kind)] = seconds; }
};

}  // namespace moesim::hw
