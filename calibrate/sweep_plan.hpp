#pragma once
// What one calibration run measures: the generic grid (full or --quick) plus the request's shapes,
// without duplicates, and how many times. Pure data: testable without a GPU.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "hw/profile.hpp"

namespace moesim::calibrate {

struct GemmTask {
  Precision precision = Precision::kBf16;
  std::int64_t m = 0, n = 0, k = 0;
};

struct GroupedTask {
  std::vector<int> tokens;
  std::int64_t n = 0, k = 0;
  std::string load;  ///< "balanced", "skewed" or "requested" (for the log)
};

struct KernelTask {
  hw::MemoryKernel kernel = hw::MemoryKernel::kPermute;  ///< not the copy (SweepPlan::copy_bytes)
  int tokens = 0, hidden = 0, experts = 0, topk = 0;
};

struct AttentionTask {
  int batch_heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
};

struct Repeats {
  int warmup = 5;
  int repeats = 20;              ///< samples per measurement
  int alternative_repeats = 10;  ///< samples per non-first heuristic algorithm
  int large_repeats = 10;        ///< samples when one call lasts longer than large_call_us
  double large_call_us = 20000;
};

struct SweepPlan {
  bool quick = false;
  Repeats repeats;
  std::vector<GemmTask> gemm;
  std::vector<GroupedTask> grouped;
  std::vector<KernelTask> kernels;
  std::vector<std::size_t> copy_bytes;        ///< buffer sizes of the device-to-device copy
  std::vector<AttentionTask> attention;
  std::vector<std::size_t> collective_bytes;  ///< nccl-tests "size" of each collective
};

/// Per-expert loads summing to `total`: equal shares, or Zipf-skewed (weight 1 / (rank + 1)^1.2,
/// largest remainders), the hottest expert first.
[[nodiscard]] std::vector<int> expert_loads(int experts, int total, bool skewed);

/// The generic grid (README.md lists it) plus the request's shapes (config/calibration_request_loader
/// checked them against hw::calibration_limits).
[[nodiscard]] SweepPlan make_sweep_plan(const hw::CalibrationRequest& request, bool quick);

}  // namespace moesim::calibrate
