#include "cli/report_topology.hpp"

#include <filesystem>

#include "config/topology_loader.hpp"
#include "core/error.hpp"

namespace moesim::cli {
namespace {

/// The topology the scenario's cluster stands for: its topology file (relative to the scenario's
/// folder), else the preset's builder.
hw::Topology topology_of(const Scenario& s) {
  if (s.topology_file.empty()) return hw::build_topology(s.system);
  std::filesystem::path file(s.topology_file);
  if (file.is_relative() && s.file.rfind("builtin:", 0) != 0) file = std::filesystem::path(s.file).parent_path() / file;
  return config::load_topology_file(file.lexically_normal().string());
}

}  // namespace

std::optional<hw::TierGraph> report_topology(const Scenario& s) {
  try {
    return hw::tier_graph(topology_of(s));
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace moesim::cli
