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
// Double binary tree: tuning.cc scales tree bandwidth by 0.92 (LL128/Simple caps) and the tree
// pattern by 0.85.
constexpr double kTreeShare = 0.85;
using nccl::kCallOverhead;
using nccl::kPipelineBytes;

int proto_index(Protocol p) { return static_cast<int>(p); }

}  // namespace

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kNvls: return "nvls";
    case Algorithm::kDirect: return "direct";
    case Algorithm::kHierarchical: return "hierarchical";
  }
  return "?";
}

std::string_view to_string(Protocol p) {
  switch (p) {
    case Protocol::kLL: return "LL";
    case Protocol::kLL128: return "LL128";
    case Protocol::kSimple: return "Simple";
  }
  return "?";
}

std::optional<Algorithm> algorithm_from_string(std::string_view s) {
  for (Algorithm a : {Algorithm::kRing, Algorithm::kTree, Algorithm::kNvls, Algorithm::kDirect, Algorithm::kHierarchical}) {
    if (to_string(a) == s) return a;
  }
  return std::nullopt;
}

std::optional<Op> op_from_string(std::string_view s) {
  for (Op o : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll, Op::kSendRecv}) {
    if (to_string(o) == s) return o;
  }
  return std::nullopt;
}

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

CollectiveCost ring_cost(const hw::SystemSpec& s, Op op, Bytes bytes, const GroupPlacement& g, Algorithm algo) {
  const std::int64_t n = g.size;
  const double passes = op == Op::kAllReduce ? 2.0 : 1.0;
  const double inter_steps = passes * static_cast<double>(g.domains() - 1);
  const double intra_steps = passes * static_cast<double>(n - 1) - inter_steps;
  const double simple_bus = ring_bus_bandwidth(s, g).value();
  const double factor = busbw_factor(op, n);
  // LL pipelines at 8-byte-line granularity (no chunk fill); LL128 and Simple move chunks.
  const double chunk_fill = std::min(bytes.value(), kPipelineBytes * static_cast<double>(n));
  CollectiveCost best;
  best.time = Seconds(INFINITY);
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    const int i = proto_index(p);
    const double fill_bytes = p == Protocol::kLL ? 0.0 : chunk_fill;
    double bus = simple_bus;
    if (p == Protocol::kLL) bus = std::min(ll_max_bandwidth(s), kLLShare * simple_bus);
    if (p == Protocol::kLL128) bus = kLL128Share * simple_bus;
    const double intra_lat = p == Protocol::kSimple ? s.nvlink_latency.value() : kNvlinkStepRing[i] * 1e-6;
    const double inter_lat = p == Protocol::kSimple ? s.network_latency.value() : kNetStepRing[i] * 1e-6;
    const double latency = kCallOverhead + kBaseLatencyRing[i] * 1e-6 + intra_steps * intra_lat + inter_steps * inter_lat;
    const double t = latency + factor * (bytes.value() + fill_bytes) / bus;
    if (t < best.time.value()) best = finish(op, bytes, n, t, algo, p);
  }
  return best;
}

CollectiveCost tree_cost(const hw::SystemSpec& s, Bytes bytes, const GroupPlacement& g) {
  // Double binary tree over domains, a chain inside each: every byte goes up and down once, so the
  // all-reduce moves 2·size per GPU at the tree's bus bandwidth (tuning.cc: algbw = busbw / 2).
  const double depth = std::ceil(std::log2(static_cast<double>(std::max<std::int64_t>(g.domains(), 2))));
  const double bus = kTreeShare * ring_bus_bandwidth(s, g).value();
  const double chunk_fill = std::min(bytes.value(), kPipelineBytes * static_cast<double>(g.size));
  CollectiveCost best;
  best.time = Seconds(INFINITY);
  for (Protocol p : {Protocol::kLL, Protocol::kLL128, Protocol::kSimple}) {
    const int i = proto_index(p);
    const double fill_bytes = p == Protocol::kLL ? 0.0 : chunk_fill;
    double b = bus;
    if (p == Protocol::kLL) b = std::min(ll_max_bandwidth(s), kLLShare * bus);
    if (p == Protocol::kLL128) b = kLL128Share * bus;
    const double latency = kCallOverhead + kBaseLatencyTree[i] * 1e-6 +
                           2.0 * (static_cast<double>(g.per_domain - 1) * kNvlinkStepTree[i] + depth * kNetStepTree[i]) * 1e-6;
    const double t = latency + 2.0 * (bytes.value() + fill_bytes) / b;
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
  const double fill_bytes = std::min(bytes.value(), 2.0 * kPipelineBytes);
  const double t = kCallOverhead + nccl::kNvlsLatency + share * (bytes.value() + fill_bytes) / algbw;
  return finish(op, bytes, g.size, t, Algorithm::kNvls, Protocol::kSimple);
}

CollectiveCost alltoall_cost(const hw::SystemSpec& s, Bytes bytes, const GroupPlacement& g, Algorithm algo) {
  const double t = collective_time(s, Op::kAllToAll, bytes, g).value();
  if (algo == Algorithm::kDirect) return finish(Op::kAllToAll, bytes, g.size, t, algo, Protocol::kSimple);
  // Hierarchical: gather the bytes bound for each remote rail over NVLink, exchange rail-aligned
  // over the network, scatter over NVLink: the network part is unchanged, two NVLink phases are
  // added in sequence (no overlap), but the message count per NIC drops by per_domain.
  const double n = static_cast<double>(g.size);
  const double remote_share = (n - static_cast<double>(g.per_domain)) / n;
  const double nvlink = s.gpu.nvlink_bandwidth.value() * s.nvlink_efficiency;
  const double net = s.network_bandwidth_per_gpu().value() * s.network_efficiency;
  const double intra_phase = bytes.value() * remote_share / nvlink;
  const double inter_phase = bytes.value() * remote_share / net;
  const double local = bytes.value() * (static_cast<double>(g.per_domain) - 1.0) / n / nvlink;
  const double th = 3.0 * s.nvlink_latency.value() + s.network_latency.value() + 2.0 * intra_phase +
                    std::max(inter_phase, local);
  return finish(Op::kAllToAll, bytes, g.size, th, algo, Protocol::kSimple);
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
