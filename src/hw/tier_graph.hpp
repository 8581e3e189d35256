#pragma once
// The topology at the granularity a report draws: every NVLink domain (its GPUs, NVSwitches and NICs)
// as one node, every leaf and spine switch as a node, and the network cables between them counted
// per pair. Built from the same Topology the flow simulation routes on.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/topology.hpp"

namespace moesim::hw {

struct TierNode {
  std::string name;       ///< "domain 3", "leaf2", "spine0"
  std::string kind;       ///< "nvlink_domain", "leaf", "spine"
  std::int32_t gpus = 0;  ///< GPUs of an NVLink domain (0 for switches)
};

struct TierEdge {
  std::int32_t a = 0, b = 0;         ///< node indices, a < b
  std::int32_t cables = 0;           ///< bidirectional cables between the two
  double bandwidth_bytes_per_s = 0;  ///< their summed bandwidth, one direction
};

struct TierGraph {
  std::string name, description;
  std::vector<TierNode> nodes;
  std::vector<TierEdge> edges;  ///< sorted by (a, b)
};

[[nodiscard]] TierGraph tier_graph(const Topology& t);

}  // namespace moesim::hw
