#pragma once
// Readers of the scenario fields that the field tables mark special because their shape depends on
// their value (recompute: a string or an object; routing: the distribution decides its keys); the
// table-driven reading and the sections that depend on the cluster live in scenario_loader.cpp.
// Internal to config/.
#include <filesystem>

#include "config/json_reader.hpp"
#include "scenario/scenario.hpp"

namespace moesim::config::detail {

/// "recompute": a granularity string or {"granularity", "modules"}; absent → none.
[[nodiscard]] RecomputeSpec read_recompute(const Json* value);
/// "moe.routing" at `path`: the distribution and the one parameter it takes, the variation switches,
/// device-limited routing. A histogram file is kept as written and must exist relative to
/// `base_dir` with a .csv or .json name; its contents are read by load_routing_histogram_of once
/// the model is known.
[[nodiscard]] RoutingSpec read_routing(const Json& v, const std::string& path, const std::filesystem::path& base_dir);
/// Where a histogram file written as `written` in a scenario lives: relative to `base_dir`.
[[nodiscard]] std::filesystem::path histogram_path(const std::string& written, const std::filesystem::path& base_dir);
/// For histogram routing, reads the file read_routing checked and validates it against `model`
/// (expert and MoE layer counts); other distributions are left as they are. Errors inside the
/// file name the file; a dense model is refused at /moe/routing/distribution.
void load_routing_histogram_of(RoutingSpec& routing, const model::ModelSpec& model,
                               const std::filesystem::path& base_dir);

}  // namespace moesim::config::detail
