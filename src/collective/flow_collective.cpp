#include "collective/flow_collective.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "collective/nccl_constants.hpp"
#include "core/error.hpp"

namespace moesim::collective {
namespace {

// The closed form's pipeline fill becomes extra bytes moved at the flow's rate; its latencies are
// the flows' latency before the first byte.
using nccl::kCallOverhead;
using nccl::kNvlsAlgbwShare;
using nccl::kPipelineBytes;

std::int32_t domain_of(const hw::Topology& t, std::int32_t gpu) {
  return t.nodes()[static_cast<std::size_t>(t.gpu_node(gpu))].domain;
}

struct Plan {
  struct Flow {
    std::int32_t src, dst;  ///< GPU indices, or src == dst == -1 with explicit links
    std::vector<std::int32_t> links;
    double bytes;
  };
  std::vector<Flow> flows;
  double latency_s = 0;
  Algorithm algorithm = Algorithm::kRing;
};

// Ring channels over domains: channel c visits each domain's members rotated by c, so with PXN
// the exit GPU of channel c hands over on rail c and the k channels use k different NICs, as NCCL's
// rings over rail-optimized nodes do.
Plan ring_plan(const hw::Topology& topo, const hw::SystemSpec& sys, Op op, double bytes,
               const std::vector<std::int32_t>& ranks) {
  Plan plan;
  plan.algorithm = Algorithm::kRing;
  std::map<std::int32_t, std::vector<std::int32_t>> by_domain;
  for (std::int32_t r : ranks) by_domain[domain_of(topo, r)].push_back(r);
  const GroupPlacement g = placement_of(topo, ranks);
  const std::int64_t n = static_cast<std::int64_t>(ranks.size());
  const std::int64_t channels = g.crosses_domains() ? g.per_domain : 1;
  const double fill = std::min(bytes, kPipelineBytes * static_cast<double>(n));
  const double per_edge = busbw_factor(op, n) * (bytes + fill) / static_cast<double>(channels);
  for (std::int64_t c = 0; c < channels; ++c) {
    std::vector<std::int32_t> order;
    for (auto& [domain, members] : by_domain) {
      const std::size_t k = members.size();
      for (std::size_t i = 0; i < k; ++i) order.push_back(members[(i + static_cast<std::size_t>(c)) % k]);
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::int32_t src = order[i], dst = order[(i + 1) % order.size()];
      plan.flows.push_back({src, dst, topo.route(src, dst), per_edge});
    }
  }
  const double passes = op == Op::kAllReduce ? 2.0 : 1.0;
  const double inter = passes * static_cast<double>(g.domains() - 1);
  const double intra = passes * static_cast<double>(n - 1) - inter;
  plan.latency_s = kCallOverhead + nccl::kRingSimpleBaseLatency + intra * sys.nvlink_latency.value() + inter * sys.network_latency.value();
  return plan;
}

Plan nvls_plan(const hw::Topology& topo, const hw::SystemSpec& sys, Op op, double bytes,
               const std::vector<std::int32_t>& ranks) {
  Plan plan;
  plan.algorithm = Algorithm::kNvls;
  const double n = static_cast<double>(ranks.size());
  const double share = op == Op::kAllReduce ? 1.0 : (n - 1.0) / n;
  // Each GPU sends its data up to the switch once and receives the result once; bytes are scaled so
  // that an idle link (capacity line × nvlink_efficiency) moves them at the NVLS algbw.
  const double scale = sys.nvlink_efficiency / kNvlsAlgbwShare;
  const double moved = share * (bytes + std::min(bytes, 2.0 * kPipelineBytes)) * scale;
  for (std::int32_t r : ranks) {
    const std::int32_t node = topo.gpu_node(r);
    for (std::int32_t l : topo.out_links(node)) {
      const auto& link = topo.links()[static_cast<std::size_t>(l)];
      if (link.tier != hw::LinkTier::kNvlink) continue;
      plan.flows.push_back({-1, -1, {l}, moved});  // up to the switch
      // ... and the reverse link back down to this GPU.
      for (std::int32_t back : topo.out_links(link.dst)) {
        if (topo.links()[static_cast<std::size_t>(back)].dst == node) plan.flows.push_back({-1, -1, {back}, moved});
      }
      break;
    }
  }
  plan.latency_s = kCallOverhead + nccl::kNvlsLatency;
  return plan;
}

Plan alltoall_plan(const hw::Topology& topo, const hw::SystemSpec& sys, double bytes, const std::vector<std::int32_t>& ranks,
                   const std::vector<std::vector<double>>& matrix) {
  Plan plan;
  plan.algorithm = Algorithm::kDirect;
  const std::size_t n = ranks.size();
  if (!matrix.empty() && (matrix.size() != n || std::any_of(matrix.begin(), matrix.end(), [&](const auto& row) { return row.size() != n; }))) {
    throw InputError("/matrix", std::to_string(matrix.size()), "all-to-all matrix must be ranks × ranks (" + std::to_string(n) + ")");
  }
  const double per_peer = bytes / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      const double b = matrix.empty() ? per_peer : matrix[i][j];
      if (b <= 0) continue;
      plan.flows.push_back({ranks[i], ranks[j], topo.route(ranks[i], ranks[j]), b});
    }
  }
  const GroupPlacement g = placement_of(topo, ranks);
  plan.latency_s = g.crosses_domains() ? sys.network_latency.value() : sys.nvlink_latency.value();
  return plan;
}

Plan make_plan(const hw::Topology& topo, const hw::SystemSpec& sys, const CollectiveRequest& r) {
  for (std::int32_t g : r.ranks) {
    if (g < 0 || g >= topo.num_gpus()) {
      throw InputError("/ranks", std::to_string(g), "rank is not a GPU of the topology",
                       "0.." + std::to_string(topo.num_gpus() - 1));
    }
  }
  const GroupPlacement g = placement_of(topo, r.ranks);
  const Algorithm algo = r.algorithm ? *r.algorithm : best_collective(sys, r.op, r.bytes, g).algorithm;
  switch (r.op) {
    case Op::kAllReduce:
    case Op::kAllGather:
    case Op::kReduceScatter:
      if (algo == Algorithm::kNvls) return nvls_plan(topo, sys, r.op, r.bytes.value(), r.ranks);
      if (algo == Algorithm::kRing) return ring_plan(topo, sys, r.op, r.bytes.value(), r.ranks);
      throw InputError("--algo", std::string(to_string(algo)), "has no flow decomposition yet (tree runs at fidelity estimate)",
                       "ring, nvls");
    case Op::kAllToAll:
      if (algo != Algorithm::kDirect) {
        throw InputError("--algo", std::string(to_string(algo)), "has no flow decomposition yet", "direct");
      }
      return alltoall_plan(topo, sys, r.bytes.value(), r.ranks, r.matrix);
    case Op::kSendRecv: {
      if (r.ranks.size() != 2) throw InputError("/ranks", std::to_string(r.ranks.size()), "send/recv needs exactly 2 ranks");
      Plan p;
      p.algorithm = Algorithm::kDirect;
      p.flows.push_back({r.ranks[0], r.ranks[1], topo.route(r.ranks[0], r.ranks[1]), r.bytes.value()});
      p.latency_s = placement_of(topo, r.ranks).crosses_domains() ? sys.network_latency.value() : sys.nvlink_latency.value();
      return p;
    }
  }
  return {};
}

}  // namespace

GroupPlacement placement_of(const hw::Topology& topo, const std::vector<std::int32_t>& ranks) {
  std::map<std::int32_t, std::int64_t> count;
  for (std::int32_t r : ranks) ++count[domain_of(topo, r)];
  GroupPlacement g;
  g.size = static_cast<std::int64_t>(ranks.size());
  g.per_domain = 1;
  for (const auto& [d, c] : count) g.per_domain = std::max(g.per_domain, c);
  return g;
}

std::vector<engine::LinkCapacity> effective_capacities(const hw::Topology& topo, const hw::SystemSpec& system) {
  std::vector<engine::LinkCapacity> caps;
  caps.reserve(topo.links().size());
  for (const auto& l : topo.links()) {
    double eff = 1.0;
    if (l.tier == hw::LinkTier::kNvlink) eff = system.nvlink_efficiency;
    if (l.tier == hw::LinkTier::kNetwork) eff = system.network_efficiency;
    caps.push_back({l.bandwidth.value() * eff});
  }
  return caps;
}

std::vector<CollectiveOutcome> simulate_collectives(const hw::Topology& topo, const hw::SystemSpec& system,
                                                    const std::vector<CollectiveRequest>& requests,
                                                    engine::FlowNetworkOptions options) {
  engine::EventQueue queue;
  engine::FlowNetwork net(queue, effective_capacities(topo, system), options);
  std::vector<CollectiveOutcome> out(requests.size());
  std::vector<engine::SimTime> finish(requests.size(), 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const Plan plan = make_plan(topo, system, requests[i]);
    out[i].algorithm = plan.algorithm;
    out[i].flows = static_cast<std::int64_t>(plan.flows.size());
    finish[i] = requests[i].start + engine::to_sim_time(Seconds(plan.latency_s));
    for (const auto& f : plan.flows) {
      engine::FlowRequest fr;
      fr.path = f.links;
      fr.bytes = f.bytes;
      fr.start = requests[i].start;
      fr.latency = engine::to_sim_time(Seconds(plan.latency_s));
      net.add_flow(std::move(fr), [&finish, i](engine::FlowId, engine::SimTime t) { finish[i] = std::max(finish[i], t); });
    }
  }
  queue.run();
  for (std::size_t i = 0; i < requests.size(); ++i) out[i].time = engine::to_seconds(finish[i] - requests[i].start);
  return out;
}

}  // namespace moesim::collective
