#pragma once
// The links the step simulation shares among transfers: per simulated rank, its NVLink port and its
// network port (all its NICs), one link per direction. A rail-optimized fat tree is non-blocking
// above the NICs, so a rank's own ports are where its collectives, pipeline sends and data-parallel
// traffic contend; transfers on the same port share it max-min fairly.
//
// Each rank's ports form their own small flow network on the shared event queue: no flow crosses
// two ranks' ports (a pipeline send is booked on the sender's out port; the receiver's in port,
// busy with the same symmetric traffic, is left out), so the max-min problems are independent and
// a rank's solve never touches another rank's flows.
//
// A collective's closed form (collective/closed_form.hpp) is latency + bytes / bandwidth. As a flow
// it keeps the latency and carries (time − latency) × port capacity bytes over the port of its tier,
// so a lone collective takes exactly its closed-form time and concurrent ones slow each other down.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collective/closed_form.hpp"
#include "engine/flow_network.hpp"
#include "hw/system_spec.hpp"

namespace moesim::sim {

enum class Tier : std::uint8_t { kNvlink, kNetwork };

/// Which of a rank's ports a transfer uses: both directions (collectives send and receive alike)
/// or the out port only (a pipeline send).
enum class Direction : std::uint8_t { kBoth, kOut };

/// Traffic of one port over the run.
struct PortStats {
  std::int64_t rank = 0;  ///< index of the simulated rank
  std::string port;       ///< "nvlink out", "network in", ...
  double bytes = 0;
  double busy_s = 0;
  double capacity_Bps = 0;
  double peak_utilisation = 0;
};

class PortNetwork {
 public:
  PortNetwork(engine::EventQueue& queue, const hw::SystemSpec& system, std::int64_t ranks);

  /// The tier a group's traffic is limited by: the network as soon as it spans NVLink domains.
  [[nodiscard]] static Tier tier_of(const collective::GroupPlacement& g) {
    return g.crosses_domains() ? Tier::kNetwork : Tier::kNvlink;
  }

  /// Starts a transfer on `rank`'s ports that alone completes `seconds` after `start`, `latency_s`
  /// of which is latency; `done` runs when it completes.
  void transfer(std::int64_t rank, Tier tier, Direction direction, double seconds, double latency_s,
                engine::SimTime start, engine::FlowNetwork::Completion done);

  [[nodiscard]] std::int64_t flows() const { return flows_; }
  [[nodiscard]] std::vector<PortStats> stats() const;

 private:
  [[nodiscard]] double capacity_Bps(Tier tier) const { return tier == Tier::kNvlink ? nvlink_Bps_ : network_Bps_; }

  double nvlink_Bps_ = 0;
  double network_Bps_ = 0;
  std::vector<std::unique_ptr<engine::FlowNetwork>> nets_;  ///< one per simulated rank
  std::int64_t flows_ = 0;
};

}  // namespace moesim::sim
