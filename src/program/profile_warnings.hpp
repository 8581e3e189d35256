#pragma once
// The result's account of a calibration profile (docs/profile.md): which kernels and collectives the
// profile answered (interpolated, or clamped to its measured range) and which fell back to the
// roofline or the closed form, aggregated by kind from the cost models' counters.
#include <string>
#include <vector>

#include "collective/cost_model.hpp"
#include "compute/kernel_cost.hpp"
#include "hw/profile.hpp"

namespace moesim::program {

/// One warning per kind that was queried ("profile NAME: gemm bf16 interpolated (412 queries, 3
/// outside measured range m 256..16384, ...)"), after a line naming the profile and its source.
[[nodiscard]] std::vector<std::string> profile_warnings(const hw::Profile& profile,
                                                        const compute::KernelCostModel& kernels,
                                                        const collective::CollectiveCostModel& collectives);

/// "1 KiB", "8 MiB", "1.5 GiB", "300 B": powers of 1024, up to three significant digits.
[[nodiscard]] std::string format_bytes(double bytes);

}  // namespace moesim::program
