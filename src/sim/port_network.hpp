#pragma once
// The links the step simulation shares among transfers: per simulated rank, its NVLink port and its
// network port (all its NICs), one link per direction. A rail-optimized fat tree is non-blocking
// above the NICs, so a rank's own ports are where its collectives, pipeline sends and data-parallel
// traffic contend; transfers that land on the same port share it max-min fairly.
//
// A collective's closed form (collective/closed_form.hpp) is latency + bytes / bandwidth. As a flow
// it keeps the latency and carries (time − latency) × port capacity bytes over the port of its tier,
// so a lone collective takes exactly its closed-form time and concurrent ones slow each other down.
#include <cstdint>
#include <string>
#include <vector>

#include "collective/closed_form.hpp"
#include "engine/flow_network.hpp"
#include "hw/system_spec.hpp"

namespace moesim::sim {

enum class Tier : std::uint8_t { kNvlink, kNetwork };

class PortNetwork {
 public:
  PortNetwork(const hw::SystemSpec& system, std::int64_t ranks);

  /// Links of the network (four per rank), for engine::FlowNetwork.
  [[nodiscard]] std::vector<engine::LinkCapacity> link_capacities() const;
  [[nodiscard]] engine::LinkId out_port(std::int64_t rank, Tier tier) const;
  [[nodiscard]] engine::LinkId in_port(std::int64_t rank, Tier tier) const;
  [[nodiscard]] double capacity_bytes_per_s(Tier tier) const;
  [[nodiscard]] std::string link_name(engine::LinkId link, const std::vector<std::int64_t>& global_ranks) const;

  /// The tier a group's traffic is limited by: the network as soon as it spans NVLink domains.
  [[nodiscard]] static Tier tier_of(const collective::GroupPlacement& g) {
    return g.crosses_domains() ? Tier::kNetwork : Tier::kNvlink;
  }

  /// A flow from `from`'s out port to `to`'s in port that alone completes `seconds` after it
  /// starts, `latency_s` of which is latency.
  [[nodiscard]] engine::FlowRequest transfer(std::int64_t from, std::int64_t to, Tier tier, double seconds,
                                             double latency_s, engine::SimTime start) const;

 private:
  double nvlink_Bps_ = 0;
  double network_Bps_ = 0;
  std::int64_t ranks_ = 0;
};

}  // namespace moesim::sim
