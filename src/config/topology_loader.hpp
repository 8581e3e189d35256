#pragma once
// Topology files ("schema": "moesim.topology/1", described in topologies/README.md): the strict reader
// and the writer that produced the preset files topologies/*.json from the builders.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/json_reader.hpp"
#include "hw/topology.hpp"

namespace moesim::config {

inline constexpr std::string_view kTopologySchema = "moesim.topology/1";

/// Reads, checks and validates a topology file; every fault is an InputError naming the file, the
/// JSON path, the value and the rule.
[[nodiscard]] hw::Topology load_topology_file(const std::string& path);
/// The same from parsed JSON; `file` goes into the messages.
[[nodiscard]] hw::Topology parse_topology(const Json& obj, const std::string& file);

/// The file text of a topology: one node or cable per line, a link and its identical way back
/// written once (bidirectional is the default), numbers rounded to 10^-6 of their unit (GB/s, us).
/// parse_topology of this text rebuilds the same nodes, and the same links in the same order when
/// each link's way back directly follows it (as the builders add them).
[[nodiscard]] std::string topology_to_json_text(const hw::Topology& t);

/// A cluster description derived from a topology file, for a scenario's `system: {"topology": ...}`.
struct DerivedSystem {
  hw::SystemSpec system;               ///< gpus, gpu, domains, hosts and NICs from the file; NCCL figures from a preset
  std::string matched_preset;          ///< the system preset the NCCL figures come from; "" when none matched
  std::vector<std::string> warnings;   ///< assumptions the user should know about (no matching preset, ...)
};

/// Derives the SystemSpec every cost model reads from a validated topology (rules and their reasons:
/// docs/topology.md, "A topology file in a scenario"). `file` goes into the messages and into
/// `system.sources`, which say where each figure came from. A file the rules cannot turn into one
/// figure per system (NVLink domains of different sizes, GPUs with different NICs) is an InputError
/// naming the file, the JSON path and the rule.
/// `gpu`, when given, replaces the file's GPU type (a scenario's system.gpu override) as it does for a
/// preset: the GPU's peaks change, the cluster's figures (and the preset they are matched with) do not.
[[nodiscard]] DerivedSystem derive_system_spec(const hw::Topology& t, const std::string& file,
                                               const std::optional<hw::GpuSpec>& gpu = std::nullopt);

}  // namespace moesim::config
