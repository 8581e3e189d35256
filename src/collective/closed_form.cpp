#include "collective/closed_form.hpp"

#include <algorithm>

namespace moesim::collective {

std::string_view to_string(Op op) { return name_of(kOpNames, op); }

GroupPlacement place_group(const hw::SystemSpec& system, std::int64_t size, std::int64_t stride) {
  GroupPlacement g;
  g.size = std::max<std::int64_t>(size, 1);
  const std::int64_t domain = std::max<std::int64_t>(system.nvlink_domain_size, 1);
  stride = std::max<std::int64_t>(stride, 1);
  g.per_domain = std::clamp<std::int64_t>(domain / stride, 1, g.size);
  return g;
}

namespace {
BytesPerSecond nvlink_bus_bandwidth(const hw::SystemSpec& s) { return s.gpu.nvlink_bandwidth * s.nvlink_efficiency; }
BytesPerSecond network_bandwidth(const hw::SystemSpec& s) { return s.network_bandwidth_per_gpu() * s.network_efficiency; }
}  // namespace

BytesPerSecond ring_bus_bandwidth(const hw::SystemSpec& system, const GroupPlacement& g) {
  const BytesPerSecond nvlink = nvlink_bus_bandwidth(system);
  if (!g.crosses_domains()) return nvlink;
  return std::min(nvlink, network_bandwidth(system) * static_cast<double>(g.per_domain));
}

double busbw_factor(Op op, std::int64_t n) {
  const double nn = static_cast<double>(std::max<std::int64_t>(n, 1));
  switch (op) {
    case Op::kAllReduce: return 2.0 * (nn - 1.0) / nn;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: return (nn - 1.0) / nn;
    case Op::kSendRecv: return 1.0;
  }
  return 1.0;
}

Seconds collective_time(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g) {
  if (bytes.value() <= 0) return Seconds(0);
  const std::int64_t n = g.size;
  if (n <= 1 && op != Op::kSendRecv) return Seconds(0);
  const Seconds intra_lat = system.nvlink_latency;
  const Seconds inter_lat = system.network_latency;
  const std::int64_t domains = g.domains();
  switch (op) {
    case Op::kAllReduce:
    case Op::kAllGather:
    case Op::kReduceScatter: {
      // Ring: n−1 steps (2(n−1) for all-reduce); the steps that cross a domain boundary pay the
      // network latency (NCCL tuning.cc: nInterSteps = nNodes − 1 per ring pass).
      const double passes = op == Op::kAllReduce ? 2.0 : 1.0;
      const double inter_steps = passes * static_cast<double>(domains - 1);
      const double intra_steps = passes * static_cast<double>(n - 1) - inter_steps;
      const Seconds latency = intra_lat * intra_steps + inter_lat * inter_steps;
      return latency + bytes * busbw_factor(op, n) / ring_bus_bandwidth(system, g);
    }
    case Op::kAllToAll: {
      // Pairwise exchange, all peers at once: bytes to peers in the same domain go over NVLink, the
      // rest over this GPU's NICs; both proceed concurrently, the slower one sets the time.
      const double nn = static_cast<double>(n);
      const double per_peer = bytes.value() / nn;
      const double intra_peers = static_cast<double>(std::min(g.per_domain, n) - 1);
      const double inter_peers = nn - 1.0 - intra_peers;
      return alltoall_split_time(system, Bytes(per_peer * intra_peers), Bytes(per_peer * inter_peers), g);
    }
    case Op::kSendRecv: {
      if (g.crosses_domains()) return inter_lat + bytes / network_bandwidth(system);
      return intra_lat + bytes / nvlink_bus_bandwidth(system);
    }
  }
  return Seconds(0);
}

Seconds alltoall_split_time(const hw::SystemSpec& system, Bytes nvlink_bytes, Bytes network_bytes,
                            const GroupPlacement& g) {
  if (nvlink_bytes.value() <= 0 && network_bytes.value() <= 0) return Seconds(0);
  const bool remote = g.crosses_domains() && network_bytes.value() > 0;
  const Seconds intra = nvlink_bytes / nvlink_bus_bandwidth(system);
  const Seconds inter = remote ? network_bytes / network_bandwidth(system) : Seconds(0);
  return (remote ? system.network_latency : system.nvlink_latency) + std::max(intra, inter);
}

}  // namespace moesim::collective
