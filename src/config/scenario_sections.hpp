#pragma once
// Readers of the scenario fields that the field tables mark special because their shape depends on
// their value (recompute: a string or an object; routing: the distribution decides its keys; the
// runtime's CUDA-graph scopes: "none" or a list; its host: a name or a number); the
// table-driven reading and the sections that depend on the cluster live in scenario_loader.cpp.
// Internal to config/.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/named_enum.hpp"
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
/// file name the file; a dense model is refused at `path`/distribution (`path`: where the routing
/// spec was read, /moe/routing or /moe/placement/profile).
void load_routing_histogram_of(RoutingSpec& routing, const model::ModelSpec& model,
                               const std::filesystem::path& base_dir, const std::string& path);

/// "runtime.cuda_graph" at `path`: "none" (eager) or a list of scope names, each at most once.
[[nodiscard]] std::vector<CudaGraphScope> read_cuda_graph(const Json& v, const std::string& path);
/// "runtime.host" at `path`: a host kind's name, or a number (the speed relative to `system_host`,
/// which stays the kind).
[[nodiscard]] RuntimeHost read_host(const Json& v, const std::string& path, hw::HostKind system_host);

/// A list of names from `table` at `path`, each at most once; [] is allowed.
template <typename E, std::size_t N>
[[nodiscard]] std::vector<E> read_name_list(const Json& v, const std::string& path, const EnumNames<E, N>& table) {
  const std::string allowed = "a list of: " + join(names_of(table));
  if (!v.is_array()) throw InputError(path, describe_value(v), "expected a list of names", allowed);
  std::vector<E> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = path + "/" + std::to_string(i);
    const auto e = v[i].is_string() ? value_of(table, v[i].get<std::string>()) : std::nullopt;
    if (!e) throw InputError(at, describe_value(v[i]), "unknown name in " + path.substr(path.rfind('/') + 1), join(names_of(table)));
    if (std::find(out.begin(), out.end(), *e) != out.end()) {
      throw InputError(at, describe_value(v[i]), "named twice", "each name at most once");
    }
    out.push_back(*e);
  }
  return out;
}

}  // namespace moesim::config::detail
