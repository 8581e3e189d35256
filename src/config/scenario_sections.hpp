#pragma once
// Readers of the scenario sections that stand on their own (recompute, moe, optimizer); the
// orchestration and the sections that depend on the cluster live in scenario_loader.cpp. Internal
// to config/.
#include <filesystem>

#include "config/json_reader.hpp"
#include "scenario/scenario.hpp"

namespace moesim::config::detail {

/// "recompute": a granularity string or {"granularity", "modules"}; absent → none.
[[nodiscard]] RecomputeSpec read_recompute(const Json* value);
/// "moe": dispatcher, capacity_factor, routing, grouped_gemm; absent → defaults. A histogram file is
/// kept as written and must exist relative to `base_dir`.
[[nodiscard]] MoeSpec read_moe(const Json* value, const std::filesystem::path& base_dir);
/// "optimizer": distributed, overlap_grad_reduce, overlap_param_gather; absent → all true.
[[nodiscard]] OptimizerSpec read_optimizer(const Json* value);

}  // namespace moesim::config::detail
