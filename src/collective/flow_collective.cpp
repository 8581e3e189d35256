#include "collective/flow_collective.hpp"

#include <algorithm>
#include <cmath>
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
using nccl::pipeline_fill_bytes;

std::int32_t domain_of(const hw::Topology& t, std::int32_t gpu) {
  return t.nodes()[static_cast<std::size_t>(t.gpu_node(gpu))].domain;
}

// A collective's flows in phases: phase p + 1 starts when the last flow of phase p has arrived (a
// hierarchical all-to-all forwards only what it has gathered); each phase's flows pay its latency
// before their first byte. Single-phase plans pipeline everything at once.
// The GPU whose proxy posts a message to the network: the last GPU its route visits before leaving
// the domain (the sender itself, or with PXN the member on the destination's rail).
std::int32_t proxy_of(const hw::Topology& t, const std::vector<std::int32_t>& path, std::int32_t src_gpu) {
  for (std::int32_t l : path) {
    const auto& link = t.links()[static_cast<std::size_t>(l)];
    const auto& from = t.nodes()[static_cast<std::size_t>(link.src)];
    if (link.tier != hw::LinkTier::kNvlink && from.kind == hw::NodeKind::kGpu) return from.gpu_index;
  }
  return src_gpu;
}

struct Plan {
  struct Flow {
    std::int32_t src, dst;  ///< GPU indices, or src == dst == -1 with explicit links
    std::vector<std::int32_t> links;
    double bytes;
  };
  struct Phase {
    std::vector<Flow> flows;
    double latency_s = 0;
  };
  std::vector<Phase> phases{1};
  Algorithm algorithm = Algorithm::kRing;
  [[nodiscard]] std::vector<Flow>& flows() { return phases.front().flows; }
  void set_latency(double s) { phases.front().latency_s = s; }
  [[nodiscard]] std::int64_t flow_count() const {
    std::int64_t n = 0;
    for (const auto& p : phases) n += static_cast<std::int64_t>(p.flows.size());
    return n;
  }
};

// Members of each NVLink domain, in rank order.
std::vector<std::vector<std::int32_t>> members_by_domain(const hw::Topology& topo, const std::vector<std::int32_t>& ranks) {
  std::map<std::int32_t, std::vector<std::int32_t>> by_domain;
  for (std::int32_t r : ranks) by_domain[domain_of(topo, r)].push_back(r);
  std::vector<std::vector<std::int32_t>> out;
  for (auto& [domain, members] : by_domain) out.push_back(std::move(members));
  return out;
}

// Ring channels over domains: channel c visits each domain's members rotated by c, so with PXN
// the exit GPU of channel c hands over on rail c and the k channels use k different NICs, as NCCL's
// rings over rail-optimized nodes do.
Plan ring_plan(const hw::Topology& topo, const ProtocolTerms& terms, Op op, double bytes,
               const std::vector<std::int32_t>& ranks) {
  Plan plan;
  plan.algorithm = Algorithm::kRing;
  std::map<std::int32_t, std::vector<std::int32_t>> by_domain;
  for (std::int32_t r : ranks) by_domain[domain_of(topo, r)].push_back(r);
  const GroupPlacement g = placement_of(topo, ranks);
  const std::int64_t n = static_cast<std::int64_t>(ranks.size());
  const std::int64_t channels = g.crosses_domains() ? g.per_domain : 1;
  // The protocol's share of the bandwidth becomes more bytes at the link's full rate.
  const double per_edge = busbw_factor(op, n) * (bytes + terms.fill_bytes) / static_cast<double>(channels) / terms.nvlink_share;
  for (std::int64_t c = 0; c < channels; ++c) {
    std::vector<std::int32_t> order;
    for (auto& [domain, members] : by_domain) {
      const std::size_t k = members.size();
      for (std::size_t i = 0; i < k; ++i) order.push_back(members[(i + static_cast<std::size_t>(c)) % k]);
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::int32_t src = order[i], dst = order[(i + 1) % order.size()];
      plan.flows().push_back({src, dst, topo.route(src, dst), per_edge});
    }
  }
  plan.set_latency(terms.latency_s);
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
  const double moved = share * (bytes + pipeline_fill_bytes(bytes, 2.0)) * scale;
  for (std::int32_t r : ranks) {
    const std::int32_t node = topo.gpu_node(r);
    for (std::int32_t l : topo.out_links(node)) {
      const auto& link = topo.links()[static_cast<std::size_t>(l)];
      if (link.tier != hw::LinkTier::kNvlink) continue;
      plan.flows().push_back({-1, -1, {l}, moved});  // up to the switch
      // ... and the reverse link back down to this GPU.
      for (std::int32_t back : topo.out_links(link.dst)) {
        if (topo.links()[static_cast<std::size_t>(back)].dst == node) plan.flows().push_back({-1, -1, {back}, moved});
      }
      break;
    }
  }
  plan.set_latency(kCallOverhead + nccl::kNvlsLatency);
  return plan;
}

// Double binary tree across domains, a chain inside each, one channel per domain member (channel c's
// chain starts at member c, so its inter-domain edges run on rail c). Each tree carries half of a
// channel's data; every chain and tree edge moves it once up (reduce) and once down (broadcast), all
// pipelined at once. Bytes are scaled by the inverse of the tier's share (tree pattern × protocol)
// so that an idle link moves them at NCCL's tree bandwidth, as the closed form does.
Plan tree_plan(const hw::Topology& topo, const ProtocolTerms& terms, double bytes, const std::vector<std::int32_t>& ranks) {
  Plan plan;
  plan.algorithm = Algorithm::kTree;
  const auto domains = members_by_domain(topo, ranks);
  const GroupPlacement g = placement_of(topo, ranks);
  const std::size_t channels = static_cast<std::size_t>(g.per_domain);
  const double per_channel = (bytes + terms.fill_bytes) / static_cast<double>(channels);
  auto both_ways = [&](std::int32_t a, std::int32_t b, double volume) {
    plan.flows().push_back({a, b, topo.route(a, b), volume});
    plan.flows().push_back({b, a, topo.route(b, a), volume});
  };
  auto member = [&](std::size_t d, std::size_t c) { return domains[d][c % domains[d].size()]; };
  for (std::size_t c = 0; c < channels; ++c) {
    for (std::size_t d = 0; d < domains.size(); ++d) {
      for (std::size_t i = 1; i < domains[d].size(); ++i) both_ways(member(d, c + i - 1), member(d, c + i), per_channel / terms.nvlink_share);
    }
    for (bool mirrored : {false, true}) {
      const auto parent = binary_tree_parents(static_cast<std::int64_t>(domains.size()), mirrored);
      for (std::size_t d = 0; d < parent.size(); ++d) {
        if (parent[d] >= 0) both_ways(member(d, c), member(static_cast<std::size_t>(parent[d]), c), per_channel / 2.0 / terms.network_share);
      }
    }
  }
  plan.set_latency(terms.latency_s);
  return plan;
}

void check_matrix(const std::vector<std::vector<double>>& matrix, std::size_t n) {
  if (!matrix.empty() && (matrix.size() != n || std::any_of(matrix.begin(), matrix.end(), [&](const auto& row) { return row.size() != n; }))) {
    throw InputError("/matrix", std::to_string(matrix.size()), "all-to-all matrix must be ranks × ranks (" + std::to_string(n) + ")");
  }
}

// Bytes rank i sends rank j: the matrix, else an even split of `bytes` (nccl-tests: what one rank
// sends, itself included).
double block(const std::vector<std::vector<double>>& matrix, double bytes, std::size_t n, std::size_t i, std::size_t j) {
  return matrix.empty() ? bytes / static_cast<double>(n) : matrix[i][j];
}

// Latency of an all-to-all's network part: the network latency plus one post overhead per message
// the busiest proxy posts (`posts`: messages per posting GPU).
double network_start_s(const hw::SystemSpec& sys, const std::map<std::int32_t, std::int64_t>& posts) {
  std::int64_t most = 0;
  for (const auto& [gpu, count] : posts) most = std::max(most, count);
  return sys.network_latency.value() + static_cast<double>(most) * nccl::kNetPostOverhead;
}

// Direct all-to-all: one flow per (source, destination) pair with bytes, routed with PXN; a message
// to another domain is posted by the proxy of the source-domain GPU on the destination's rail.
Plan alltoall_plan(const hw::Topology& topo, const hw::SystemSpec& sys, double bytes, const std::vector<std::int32_t>& ranks,
                   const std::vector<std::vector<double>>& matrix) {
  Plan plan;
  plan.algorithm = Algorithm::kDirect;
  const std::size_t n = ranks.size();
  check_matrix(matrix, n);
  std::map<std::int32_t, std::int64_t> posts;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const double b = block(matrix, bytes, n, i, j);
      if (i == j || b <= 0) continue;
      const auto path = topo.route(ranks[i], ranks[j]);
      if (domain_of(topo, ranks[i]) != domain_of(topo, ranks[j])) ++posts[proxy_of(topo, path, ranks[i])];
      plan.flows().push_back({ranks[i], ranks[j], path, b});
    }
  }
  plan.set_latency(posts.empty() ? sys.nvlink_latency.value() : network_start_s(sys, posts));
  return plan;
}

// Hierarchical all-to-all (rail-aligned): phase 1 over NVLink hands every block bound for another
// domain to the source-domain member at the destination's position (its rail on HGX), local blocks
// go straight to their destination; phase 2 sends each member's gathered blocks, aggregated into one
// message per destination, to the member at its own position in every other domain — the
// destination itself, so no scatter is left.
Plan hierarchical_plan(const hw::Topology& topo, const hw::SystemSpec& sys, double bytes, const std::vector<std::int32_t>& ranks,
                       const std::vector<std::vector<double>>& matrix) {
  Plan plan;
  plan.algorithm = Algorithm::kHierarchical;
  plan.phases.resize(2);
  const std::size_t n = ranks.size();
  check_matrix(matrix, n);
  const auto domains = members_by_domain(topo, ranks);
  std::map<std::int32_t, std::size_t> index_of, domain_index, position;
  for (std::size_t i = 0; i < n; ++i) index_of[ranks[i]] = i;
  for (std::size_t d = 0; d < domains.size(); ++d) {
    for (std::size_t p = 0; p < domains[d].size(); ++p) {
      domain_index[domains[d][p]] = d;
      position[domains[d][p]] = p;
    }
  }
  std::map<std::pair<std::int32_t, std::int32_t>, double> gather, exchange;  // (from, to) → bytes
  for (std::int32_t src : ranks) {
    const auto& home = domains[domain_index[src]];
    for (std::int32_t dst : ranks) {
      const double b = block(matrix, bytes, n, index_of[src], index_of[dst]);
      if (src == dst || b <= 0) continue;
      const std::int32_t leader = home[position[dst] % home.size()];
      if (leader != src) gather[{src, leader}] += b;
      if (leader != dst) exchange[{leader, dst}] += b;
    }
  }
  for (const auto& [ends, b] : gather) plan.phases[0].flows.push_back({ends.first, ends.second, topo.route(ends.first, ends.second), b});
  std::map<std::int32_t, std::int64_t> posts;
  for (const auto& [ends, b] : exchange) {
    ++posts[ends.first];
    plan.phases[1].flows.push_back({ends.first, ends.second, topo.route(ends.first, ends.second), b});
  }
  plan.phases[0].latency_s = sys.nvlink_latency.value();
  plan.phases[1].latency_s = network_start_s(sys, posts);
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
      if (algo == Algorithm::kRing || (algo == Algorithm::kTree && r.op == Op::kAllReduce)) {
        // The protocol the closed form picks for this size sets latency, fill and bandwidth share.
        const Protocol protocol = algorithm_cost(sys, r.op, r.bytes, g, algo).protocol;
        const ProtocolTerms terms = protocol_terms(sys, r.op, r.bytes, g, algo, protocol);
        if (algo == Algorithm::kRing) return ring_plan(topo, terms, r.op, r.bytes.value(), r.ranks);
        return tree_plan(topo, terms, r.bytes.value(), r.ranks);
      }
      throw InputError("--algo", std::string(to_string(algo)), "does not apply to " + std::string(to_string(r.op)),
                       r.op == Op::kAllReduce ? "ring, tree, nvls" : "ring, nvls");
    case Op::kAllToAll:
      if (algo == Algorithm::kDirect) return alltoall_plan(topo, sys, r.bytes.value(), r.ranks, r.matrix);
      if (algo == Algorithm::kHierarchical) return hierarchical_plan(topo, sys, r.bytes.value(), r.ranks, r.matrix);
      throw InputError("--algo", std::string(to_string(algo)), "does not apply to alltoall", "direct, hierarchical");
    case Op::kSendRecv: {
      if (r.ranks.size() != 2) throw InputError("/ranks", std::to_string(r.ranks.size()), "send/recv needs exactly 2 ranks");
      Plan p;
      p.algorithm = Algorithm::kDirect;
      p.flows().push_back({r.ranks[0], r.ranks[1], topo.route(r.ranks[0], r.ranks[1]), r.bytes.value()});
      p.set_latency(placement_of(topo, r.ranks).crosses_domains() ? sys.network_latency.value() : sys.nvlink_latency.value());
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

namespace {

// Starts phase `phase` of a plan at `at`; when its last flow arrives, the next phase starts. `finish`
// is the request's end: the last arrival of its last non-empty phase (or the latency of an empty plan).
struct PhasedRun {
  engine::FlowNetwork* net = nullptr;
  Plan plan;
  engine::SimTime* finish = nullptr;
  std::int64_t pending = 0;

  void start(std::size_t phase, engine::SimTime at) {
    while (phase < plan.phases.size() && plan.phases[phase].flows.empty()) {
      at += engine::to_sim_time(Seconds(plan.phases[phase].latency_s));
      ++phase;
    }
    *finish = std::max(*finish, at);
    if (phase >= plan.phases.size()) return;
    const auto& ph = plan.phases[phase];
    pending = static_cast<std::int64_t>(ph.flows.size());
    for (const auto& f : ph.flows) {
      engine::FlowRequest fr;
      fr.path = f.links;
      fr.bytes = f.bytes;
      fr.start = at;
      fr.latency = engine::to_sim_time(Seconds(ph.latency_s));
      net->add_flow(std::move(fr), [this, phase](engine::FlowId, engine::SimTime t) {
        *finish = std::max(*finish, t);
        if (--pending == 0) start(phase + 1, t);
      });
    }
  }
};

}  // namespace

std::vector<CollectiveOutcome> simulate_collectives(const hw::Topology& topo, const hw::SystemSpec& system,
                                                    const std::vector<CollectiveRequest>& requests,
                                                    engine::FlowNetworkOptions options) {
  engine::EventQueue queue;
  engine::FlowNetwork net(queue, effective_capacities(topo, system), options);
  std::vector<CollectiveOutcome> out(requests.size());
  std::vector<engine::SimTime> finish(requests.size(), 0);
  std::vector<std::unique_ptr<PhasedRun>> runs;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    auto run = std::make_unique<PhasedRun>();
    run->net = &net;
    run->plan = make_plan(topo, system, requests[i]);
    run->finish = &finish[i];
    out[i].algorithm = run->plan.algorithm;
    out[i].flows = run->plan.flow_count();
    finish[i] = requests[i].start;
    runs.push_back(std::move(run));
  }
  for (std::size_t i = 0; i < requests.size(); ++i) runs[i]->start(0, requests[i].start);
  queue.run();
  for (std::size_t i = 0; i < requests.size(); ++i) out[i].time = engine::to_seconds(finish[i] - requests[i].start);
  return out;
}

}  // namespace moesim::collective
