#include "sim/port_network.hpp"

#include <algorithm>

namespace moesim::sim {
namespace {
// Local link ids of one rank's network, in this order.
constexpr engine::LinkId kNvlinkOut = 0, kNvlinkIn = 1, kNetworkOut = 2, kNetworkIn = 3;
constexpr const char* kPortNames[] = {"nvlink out", "nvlink in", "network out", "network in"};
}  // namespace

PortNetwork::PortNetwork(engine::EventQueue& queue, const hw::SystemSpec& system, std::int64_t ranks)
    // The same sustained rates the closed forms use (NCCL's large-message efficiency per tier). A
    // system without a scale-out fabric still gets a (never used) positive capacity.
    : nvlink_Bps_((system.gpu.nvlink_bandwidth * system.nvlink_efficiency).value()),
      network_Bps_(std::max((system.network_bandwidth_per_gpu() * system.network_efficiency).value(), 1.0)) {
  engine::FlowNetworkOptions options;
  options.completion_batch_tolerance = 0.0;  // a handful of flows per rank: exact is cheap
  const std::vector<engine::LinkCapacity> links = {{nvlink_Bps_}, {nvlink_Bps_}, {network_Bps_}, {network_Bps_}};
  nets_.reserve(static_cast<std::size_t>(ranks));
  for (std::int64_t r = 0; r < ranks; ++r) nets_.push_back(std::make_unique<engine::FlowNetwork>(queue, links, options));
}

void PortNetwork::transfer(std::int64_t rank, Tier tier, Direction direction, double seconds, double latency_s,
                           engine::SimTime start, engine::FlowNetwork::Completion done) {
  engine::FlowRequest f;
  f.start = start;
  f.latency = engine::to_sim_time(Seconds(latency_s));
  const double bytes = std::max(0.0, seconds - latency_s) * capacity_Bps(tier);
  if (bytes > 0) {
    const bool nvlink = tier == Tier::kNvlink;
    f.path = {nvlink ? kNvlinkOut : kNetworkOut};
    if (direction == Direction::kBoth) f.path.push_back(nvlink ? kNvlinkIn : kNetworkIn);
    f.bytes = bytes;
  } else {
    f.bytes = 1;  // latency only: an empty path completes at start + latency
  }
  ++flows_;
  nets_[static_cast<std::size_t>(rank)]->add_flow(std::move(f), std::move(done));
}

std::vector<PortStats> PortNetwork::stats() const {
  std::vector<PortStats> out;
  for (std::size_t r = 0; r < nets_.size(); ++r) {
    const auto& links = nets_[r]->link_stats();
    for (std::size_t l = 0; l < links.size(); ++l) {
      PortStats p;
      p.rank = static_cast<std::int64_t>(r);
      p.port = kPortNames[l];
      p.bytes = links[l].bytes;
      p.busy_s = engine::to_seconds(links[l].busy_time).value();
      p.capacity_Bps = l < 2 ? nvlink_Bps_ : network_Bps_;
      p.peak_utilisation = links[l].peak_utilisation;
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace moesim::sim
