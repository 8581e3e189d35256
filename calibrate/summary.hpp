#pragma once
// The efficiency summary printed at the end of a run (and by device_check.sh): memory-bound kernels
// against the measured copy bandwidth, our GEMM call against the best cuBLASLt algorithm, with the
// targets of docs/performance.md.
#include <optional>
#include <string>
#include <vector>

#include "hw/profile.hpp"

namespace moesim::calibrate {

inline constexpr double kPermuteTargetPct = 80;  ///< permute / unpermute vs copy
inline constexpr double kRouterTargetPct = 50;   ///< router top-k vs copy
inline constexpr double kGemmTargetPct = 90;     ///< heuristic#0 vs the best algorithm

struct Efficiency {
  double copy_gbps = 0;                   ///< the copy row of the largest buffer
  std::optional<double> permute_pct;      ///< largest permute shape, % of copy bandwidth
  std::optional<double> unpermute_pct;
  std::optional<double> router_pct;       ///< the lower of softmax and sigmoid at their largest shape
  std::optional<double> gemm_bf16_min_pct;  ///< worst BF16 shape: best algorithm time / ours
  std::vector<std::string> lines;
  [[nodiscard]] bool meets_targets() const;
};

[[nodiscard]] Efficiency efficiency_summary(const hw::Profile& profile);

}  // namespace moesim::calibrate
