#pragma once
// Topology files ("schema": "moesim.topology/1", described in topologies/README.md): the strict reader
// and the writer that produced the preset files topologies/*.json from the builders.
#include <string>
#include <string_view>

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

}  // namespace moesim::config
