#pragma once
// Collectives as flows on the topology graph, run by the event engine (fidelity "simulation"): where
// the closed form assumes an idle fabric, flows of concurrent collectives share links max-min fairly,
// and a skewed all-to-all is paced by its busiest link.
#include <cstdint>
#include <optional>
#include <vector>

#include "collective/algorithms.hpp"
#include "engine/flow_network.hpp"
#include "hw/topology.hpp"

namespace moesim::collective {

/// One collective to run: `ranks` are GPU indices of the topology (the process group, in rank
/// order). For all-to-all, `matrix` (ranks × ranks, bytes rank i sends to rank j) replaces the
/// uniform split of `bytes` when given.
struct CollectiveRequest {
  Op op = Op::kAllReduce;
  Bytes bytes;
  std::vector<std::int32_t> ranks;
  std::optional<Algorithm> algorithm;  ///< nullopt: the closed form's choice for this size
  std::vector<std::vector<double>> matrix;
  engine::SimTime start = 0;
};

struct CollectiveOutcome {
  Seconds time;            ///< from the request's start to its last flow's completion
  Algorithm algorithm = Algorithm::kRing;
  std::int64_t flows = 0;
};

/// Engine link capacities for a topology: line rate × the system's measured efficiency of the tier
/// (NVLink, network), so an uncontended flow runs at the bus bandwidth the closed form uses.
[[nodiscard]] std::vector<engine::LinkCapacity> effective_capacities(const hw::Topology& topo, const hw::SystemSpec& system);

/// Runs the collectives together on one fabric (each from its own start time) and returns their
/// times. Ring and tree follow the protocol the closed form picks for the size; a hierarchical
/// all-to-all runs as two phases (NVLink, then network). Throws InputError for an algorithm that
/// does not apply to the op, a malformed matrix or a rank outside the topology.
[[nodiscard]] std::vector<CollectiveOutcome> simulate_collectives(const hw::Topology& topo, const hw::SystemSpec& system,
                                                                  const std::vector<CollectiveRequest>& requests,
                                                                  engine::FlowNetworkOptions options = {});

/// Placement of `ranks` on the topology's NVLink domains (members per domain = the largest count).
[[nodiscard]] GroupPlacement placement_of(const hw::Topology& topo, const std::vector<std::int32_t>& ranks);

}  // namespace moesim::collective
