#include "collective/algorithms.hpp"

#include "collective/nccl_constants.hpp"

#include <algorithm>
#include <cmath>

namespace moesim::collective {
namespace {

// NCCL src/graph/tuning.cc (NCCL 2.30.7 snapshot, ../shared/research/ecosystem.md §6), microseconds,
// rows LL / LL128 / Simple. Simple's per-step latencies come from the system preset (same figures).
constexpr double kBaseLatencyRing[3] = {6.6, 14.0, 8.4};
constexpr double kBaseLatencyTree[3] = {6.8, 14.0, 8.4};
constexpr double kNvlinkStepRing[3] = {0.6, 1.9, 3.4};
constexpr double kNvlinkStepTree[3] = {0.6, 1.25, 4.0};
constexpr double kNetStepRing[3] = {2.7, 4.0, 14.0};
constexpr double kNetStepTree[3] = {5.0, 8.5, 14.0};
// LL carries 4 B of data per 8 B line (≤ 50 %), LL128 120 of 128 B (tuning.cc applies 0.92).
constexpr double kLLShare = 0.5;
constexpr double kLL128Share = 0.92;
// llMaxBws (GB/s, one node): Ampere 87.7, Hopper 141, Blackwell 282 (tuning.cc).
double ll_max_bandwidth(const hw::SystemSpec& s) {
  if (s.gpu.architecture == "ampere") return 87.7e9;
  if (s.gpu.architecture == "hopper") return 141e9;
  return 282e9;
}
using nccl::kNvlsAlgbwShare;
using nccl::kTreeShare;
using nccl::kCallOverhead;
using nccl::pipeline_fill_bytes;

int proto_index(Protocol p) { return static_cast<int>(p); }

}  // namespace

std::string_view to_string(Algorithm a) { return name_of(kAlgorithmNames, a); }
std::string_view to_string(Protocol p) { return name_of(kProtocolNames, p); }
std::optional<Algorithm> algorithm_from_string(std::string_view s) { return value_of(kAlgorithmNames, s); }
std::optional<Op> op_from_string(std::string_view s) { return value_of(kOpNames, s); }

std::vector<Algorithm> applicable_algorithms(const hw::SystemSpec& system, Op op, const GroupPlacement& g) {
  switch (op) {
    case Op::kAllReduce: {
      std::vector<Algorithm> out{Algorithm::kRing};
      if (g.crosses_domains()) out.push_back(Algorithm::kTree);
      if (system.nvls && !g.crosses_domains() && g.size > 2) out.push_back(Algorithm::kNvls);
      return out;
    }
    case Op::kAllGather:
    case Op::kReduceScatter: {
      std::vector<Algorithm> out{Algorithm::kRing};
      if (system.nvls && !g.crosses_domains() && g.size > 2) out.push_back(Algorithm::kNvls);
      return out;
    }
    case Op::kAllToAll: {
      std::vector<Algorithm> out{Algorithm::kDirect};
      if (g.crosses_domains() && g.per_domain > 1) out.push_back(Algorithm::kHierarchical);
      return out;
    }
    case Op::kSendRecv: return {Algorithm::kDirect};
  }
  return {};
}

namespace {

CollectiveCost finish(Op op, Bytes bytes, std::int64_t n, double seconds, Algorithm a, Protocol p) {
  CollectiveCost c;
  c.time = Seconds(seconds);
  c.algorithm = a;
  c.protocol = p;
  c.algbw_GBps = seconds > 0 ? bytes.value() / seconds / 1e9 : 0;
  c.busbw_GBps = c.algbw_GBps * busbw_factor(op, n);
  return c;
}

// Protocol share of a tier's bus bandwidth `bus` (tuning.cc: LL carries 4 of 8 bytes and is capped at
// llMaxBw, LL128 120 of 128).
double protocol_share(const hw::SystemSpec& s, Protocol p, double bus) {
  if (p == Protocol::kLL) return std::min(ll_max_bandwidth(s), kLLShare * bus) / bus;
  if (p == Protocol::kLL128) return kLL128Share;
  return 1.0;
}

double nvlink_bus(const hw::SystemSpec& s) { return (s.gpu.nvlink_bandwidth * s.nvlink_efficiency).value(); }
double network_bus(const hw::SystemSpec& s) { return (s.network_bandwidth_per_gpu() * s.network_efficiency).value(); }

ProtocolTerms ring_terms(const hw::SystemSpec& s, Op op, Bytes bytes, const GroupPlacement& g, Protocol p) {
  const int i = proto_index(p);
  const double passes = op == Op::kAllReduce ? 2.0 : 1.0;
  const double inter_steps = passes * static_cast<double>(g.domains() - 1);
  const double intra_steps = passes * static_cast<double>(g.size - 1) - inter_steps;
  const double intra_lat = p == Protocol::kSimple ? s.nvlink_latency.value() : kNvlinkStepRing[i] * 1e-6;
  const double inter_lat = p == Protocol::kSimple ? s.network_latency.value() : kNetStepRing[i] * 1e-6;
  ProtocolTerms t;
  t.latency_s = kCallOverhead + kBaseLatencyRing[i] * 1e-6 + intra_steps * intra_lat + inter_steps * inter_lat;
  // LL pipelines at 8-byte-line granularity (no chunk fill); LL128 and Simple move chunks.
  t.fill_bytes = p == Protocol::kLL ? 0.0 : pipeline_fill_bytes(bytes.value(), static_cast<double>(g.size));
  // The ring runs at the bus bandwidth of the placement, one protocol share of it on every tier.
  t.nvlink_share = t.network_share = protocol_share(s, p, ring_bus_bandwidth(s, g).value());
  return t;
}

ProtocolTerms tree_terms(const hw::SystemSpec& s, Bytes bytes, const GroupPlacement& g, Protocol p) {
  const int i = proto_index(p);
  const double k = static_cast<double>(g.per_domain);
  const double depth = std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(g.domains(), 2))));
  ProtocolTerms t;
  t.latency_s = kCallOverhead + kBaseLatencyTree[i] * 1e-6 +
                2.0 * ((k - 1.0) * kNvlinkStepTree[i] + depth * kNetStepTree[i]) * 1e-6;
  t.fill_bytes = p == Protocol::kLL ? 0.0 : pipeline_fill_bytes(bytes.value(), static_cast<double>(g.size));
  t.nvlink_share = kTreeShare * protocol_share(s, p, kTreeShare * nvlink_bus(s));
  t.network_share = kTreeShare * protocol_share(s, p, kTreeShare * network_bus(s));
  return t;
}

CollectiveCost ring_cost(const hw::SystemSpec& s, Op op, Bytes bytes, const GroupPlacement& g, Algorithm algo) {
  const double simple_bus = ring_bus_bandwidth(s, g).value();
  const double factor = busbw_factor(op, g.size);
  CollectiveCost best;
  best.time = Seconds(INFINITY);
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    const ProtocolTerms terms = ring_terms(s, op, bytes, g, p);
    const double t = terms.latency_s + factor * (bytes.value() + terms.fill_bytes) / (terms.nvlink_share * simple_bus);
    if (t < best.time.value()) best = finish(op, bytes, g.size, t, algo, p);
  }
  return best;
}

CollectiveCost tree_cost(const hw::SystemSpec& s, Bytes bytes, const GroupPlacement& g) {
  // NCCL's tree: a chain inside each domain, a double binary tree across domains, one channel per
  // member of a domain (channel c's chain starts at member c, whose NIC carries the channel). Every
  // byte is reduced up and broadcast down, pipelined, so the busier of the two tiers sets the time:
  // NVLink: each GPU sends 2(k − 1)/k of the data (twice per chain position but the head's and
  // tail's); network: the busiest NIC carries max_degree/2 × data/k per direction.
  const double k = static_cast<double>(g.per_domain);
  const double nvlink_load = 2.0 * (k - 1.0) / k;
  const double nic_load = static_cast<double>(double_binary_tree_max_degree(g.domains())) / 2.0 / k;
  CollectiveCost best;
  best.time = Seconds(INFINITY);
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    const ProtocolTerms terms = tree_terms(s, bytes, g, p);
    const double moved = bytes.value() + terms.fill_bytes;
    const double nvlink_s = nvlink_load * moved / (terms.nvlink_share * nvlink_bus(s));
    const double net_s = nic_load * moved / (terms.network_share * network_bus(s));
    const double t = terms.latency_s + std::max(nvlink_s, net_s);
    if (t < best.time.value()) best = finish(Op::kAllReduce, bytes, g.size, t, Algorithm::kTree, p);
  }
  return best;
}

CollectiveCost nvls_cost(const hw::SystemSpec& s, Op op, Bytes bytes, const GroupPlacement& g) {
  // The switch reduces (multimem.ld_reduce) and multicasts: each GPU sends and receives its data
  // once, so time = size / algbw with algbw = kNvlsAlgbwShare × NVLink line rate (all-reduce); an
  // all-gather or reduce-scatter moves (n−1)/n of it.
  const double line = s.gpu.nvlink_bandwidth.value();
  const double share = op == Op::kAllReduce ? 1.0 : static_cast<double>(g.size - 1) / static_cast<double>(g.size);
  const double algbw = kNvlsAlgbwShare * line;
  // Two hops (GPU → switch → GPU) fill the NVLS pipeline, against n for a ring.
  const double fill_bytes = pipeline_fill_bytes(bytes.value(), 2.0);
  const double t = kCallOverhead + nccl::kNvlsLatency + share * (bytes.value() + fill_bytes) / algbw;
  return finish(op, bytes, g.size, t, Algorithm::kNvls, Protocol::kSimple);
}

// Network messages the busiest proxy posts: direct, with PXN, the proxy of rail r posts every local
// GPU's message to rail r of each other domain (n − k); hierarchical aggregates them, one per other
// domain (N − 1).
double alltoall_posts(const GroupPlacement& g, Algorithm algo) {
  if (!g.crosses_domains()) return 0.0;
  if (algo == Algorithm::kHierarchical) return static_cast<double>(g.domains() - 1);
  return static_cast<double>(g.size - g.per_domain);
}

CollectiveCost alltoall_cost(const hw::SystemSpec& s, Bytes bytes, const GroupPlacement& g, Algorithm algo) {
  const double posts_s = alltoall_posts(g, algo) * nccl::kNetPostOverhead;
  if (algo == Algorithm::kDirect) {
    const double t = collective_time(s, Op::kAllToAll, bytes, g).value() + posts_s;
    return finish(Op::kAllToAll, bytes, g.size, t, algo, Protocol::kSimple);
  }
  const AllToAllPhases ph = hierarchical_alltoall_phases(g);
  const double nvlink = nvlink_bus(s);
  const double net = network_bus(s);
  const double t = s.nvlink_latency.value() + ph.nvlink_share * bytes.value() / nvlink + s.network_latency.value() +
                   posts_s + ph.network_share * bytes.value() / net;
  return finish(Op::kAllToAll, bytes, g.size, t, algo, Protocol::kSimple);
}

}  // namespace

CollectiveCost algorithm_cost(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                              Algorithm algorithm) {
  if (g.size <= 1 && op != Op::kSendRecv) return finish(op, bytes, 1, 0.0, algorithm, Protocol::kSimple);
  switch (algorithm) {
    case Algorithm::kRing: return ring_cost(system, op, bytes, g, algorithm);
    case Algorithm::kTree: return tree_cost(system, bytes, g);
    case Algorithm::kNvls: return nvls_cost(system, op, bytes, g);
    case Algorithm::kDirect:
    case Algorithm::kHierarchical:
      if (op == Op::kSendRecv) {
        return finish(op, bytes, g.size, collective_time(system, op, bytes, g).value(), algorithm, Protocol::kSimple);
      }
      return alltoall_cost(system, bytes, g, algorithm);
  }
  return {};
}

ProtocolTerms protocol_terms(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                             Algorithm algorithm, Protocol protocol) {
  if (algorithm == Algorithm::kTree) return tree_terms(system, bytes, g, protocol);
  return ring_terms(system, op, bytes, g, protocol);
}

std::vector<std::int64_t> binary_tree_parents(std::int64_t nodes, bool mirrored) {
  std::vector<std::int64_t> parent(static_cast<std::size_t>(std::max<std::int64_t>(nodes, 0)), -1);
  auto node_at = [&](std::int64_t pos) { return mirrored ? nodes - 1 - pos : pos; };
  for (std::int64_t pos = 1; pos < nodes; ++pos) parent[static_cast<std::size_t>(node_at(pos))] = node_at((pos - 1) / 2);
  return parent;
}

std::int64_t double_binary_tree_max_degree(std::int64_t nodes) {
  std::vector<std::int64_t> degree(static_cast<std::size_t>(std::max<std::int64_t>(nodes, 0)), 0);
  for (bool mirrored : {false, true}) {
    const auto parent = binary_tree_parents(nodes, mirrored);
    for (std::size_t v = 0; v < parent.size(); ++v) {
      if (parent[v] < 0) continue;
      ++degree[v];
      ++degree[static_cast<std::size_t>(parent[v])];
    }
  }
  return degree.empty() ? 0 : *std::max_element(degree.begin(), degree.end());
}

AllToAllPhases hierarchical_alltoall_phases(const GroupPlacement& g) {
  // Phase 1 (NVLink): every GPU hands each other member of its domain the blocks bound for that
  // member's rail in every domain, its own domain included: (k − 1) of k members × N domains ×
  // size/n = size·(k − 1)/k. Phase 2 (network): each GPU sends its rail's aggregated blocks, k per
  // other domain: size·(N − 1)/N. The data lands on the destination's rail, so nothing is left to scatter.
  const double k = static_cast<double>(g.per_domain);
  const double domains = static_cast<double>(g.domains());
  return {(k - 1.0) / k, (domains - 1.0) / domains};
}

CollectiveCost best_collective(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                               std::optional<Algorithm> only) {
  CollectiveCost best;
  best.time = Seconds(INFINITY);
  for (Algorithm a : applicable_algorithms(system, op, g)) {
    if (only && *only != a) continue;
    const CollectiveCost c = algorithm_cost(system, op, bytes, g, a);
    if (c.time < best.time) best = c;
  }
  return best;
}

}  // namespace moesim::collective
