#pragma once
// Every kernel shape a cost model is asked for, collected when a log is attached
// (KernelCostModel::log_queries): `moesim calibrate --scenario` turns the shapes a scenario's step runs
// into the calibration request (docs/profile.md). Sets, so the request is sorted and has no duplicates.
#include <array>
#include <compare>
#include <cstdint>
#include <set>
#include <vector>

#include "core/precision.hpp"
#include "hw/profile.hpp"

namespace moesim::compute {

struct KernelQueryLog {
  struct Gemm {
    Precision precision;
    std::int64_t m, n, k;
    auto operator<=>(const Gemm&) const = default;
  };
  /// A grouped GEMM's forward problem (the data gradient's is logged as one with n and k swapped).
  struct Grouped {
    Precision precision;
    std::int64_t n, k;
    std::vector<std::int64_t> tokens;
    auto operator<=>(const Grouped&) const = default;
  };
  struct Attention {
    hw::AttentionImplementation implementation;  ///< the cost-model path that asked
    std::int64_t batch_heads, seq, head_dim;
    bool causal;
    auto operator<=>(const Attention&) const = default;
  };
  std::set<Gemm> gemm;  ///< single GEMMs (batched ones have no profile table)
  std::set<Grouped> grouped;
  std::set<Attention> attention;
  std::array<bool, hw::kMemoryKernelCount> memory{};  ///< which memory-bound kernels ran
};

}  // namespace moesim::compute
