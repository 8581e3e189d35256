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
/// kept as written and must exist relative to `base_dir` with a .csv or .json name; its contents
/// are read by load_routing_histogram_of once the model is known.
[[nodiscard]] MoeSpec read_moe(const Json* value, const std::filesystem::path& base_dir);
/// Where a histogram file written as `written` in a scenario lives: relative to `base_dir`.
[[nodiscard]] std::filesystem::path histogram_path(const std::string& written, const std::filesystem::path& base_dir);
/// For histogram routing, reads the file read_moe checked and validates it against `model`
/// (expert and MoE layer counts); other distributions are left as they are. Errors inside the
/// file name the file; a dense model is refused at /moe/routing/distribution.
void load_routing_histogram_of(RoutingSpec& routing, const model::ModelSpec& model,
                               const std::filesystem::path& base_dir);
/// "optimizer": distributed, overlap_grad_reduce, overlap_param_gather; absent → all true.
[[nodiscard]] OptimizerSpec read_optimizer(const Json* value);

}  // namespace moesim::config::detail
