#include "sim/port_network.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace moesim::sim {

PortNetwork::PortNetwork(const hw::SystemSpec& system, std::int64_t ranks)
    // The same sustained rates the closed forms use (NCCL's large-message efficiency per tier).
    : nvlink_Bps_((system.gpu.nvlink_bandwidth * system.nvlink_efficiency).value()),
      network_Bps_((system.network_bandwidth_per_gpu() * system.network_efficiency).value()),
      ranks_(ranks) {}

std::vector<engine::LinkCapacity> PortNetwork::link_capacities() const {
  std::vector<engine::LinkCapacity> links;
  links.reserve(static_cast<std::size_t>(4 * ranks_));
  for (std::int64_t r = 0; r < ranks_; ++r) {
    // Order matches out_port / in_port: nvlink out, nvlink in, network out, network in. A system
    // without a scale-out fabric still gets a (never used) positive capacity.
    links.push_back({nvlink_Bps_});
    links.push_back({nvlink_Bps_});
    links.push_back({std::max(network_Bps_, 1.0)});
    links.push_back({std::max(network_Bps_, 1.0)});
  }
  return links;
}

engine::LinkId PortNetwork::out_port(std::int64_t rank, Tier tier) const {
  return static_cast<engine::LinkId>(4 * rank + (tier == Tier::kNvlink ? 0 : 2));
}

engine::LinkId PortNetwork::in_port(std::int64_t rank, Tier tier) const {
  return static_cast<engine::LinkId>(4 * rank + (tier == Tier::kNvlink ? 1 : 3));
}

double PortNetwork::capacity_bytes_per_s(Tier tier) const {
  return tier == Tier::kNvlink ? nvlink_Bps_ : network_Bps_;
}

std::string PortNetwork::link_name(engine::LinkId link, const std::vector<std::int64_t>& global_ranks) const {
  static constexpr const char* kNames[] = {"nvlink out", "nvlink in", "network out", "network in"};
  const auto rank = static_cast<std::size_t>(link / 4);
  return fmt::format("rank {} {}", global_ranks.at(rank), kNames[link % 4]);
}

engine::FlowRequest PortNetwork::transfer(std::int64_t from, std::int64_t to, Tier tier, double seconds,
                                          double latency_s, engine::SimTime start) const {
  engine::FlowRequest f;
  f.start = start;
  f.latency = engine::to_sim_time(Seconds(latency_s));
  const double bytes = std::max(0.0, seconds - latency_s) * capacity_bytes_per_s(tier);
  if (bytes > 0) {
    f.path = {out_port(from, tier), in_port(to, tier)};
    f.bytes = bytes;
  } else {
    f.bytes = 1;  // latency only: an empty path completes at start + latency
  }
  return f;
}

}  // namespace moesim::sim
