// The topology store, its structural checks and the routing of GPU-to-GPU flows. The Boost graph
// holds the structure the graph algorithms walk (the connectivity check); the id-indexed vectors
// beside it are what the header hands out by reference. Builders (topology_builders.cpp) and the
// summary, max-flow bisection and Graphviz writer (topology_summary.cpp) use only the public API.
#include "hw/topology.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/reverse_graph.hpp>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/rng.hpp"

namespace moesim::hw {

std::string_view to_string(NodeKind k) { return name_of(kNodeKindNames, k, "unknown"); }
std::string_view to_string(LinkTier t) { return name_of(kLinkTierNames, t, "unknown"); }

namespace {

struct EdgeProp {
  std::int32_t link = -1;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, boost::no_property, EdgeProp>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

const std::vector<std::int32_t> kNoLinks;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

/// Switches carry traffic through; GPUs and NICs are endpoints, so no route ever transits a host.
bool is_transit(const TopoNode& n) { return n.kind != NodeKind::kGpu && n.kind != NodeKind::kNic; }

/// Deterministic ECMP choice among `n` equal-cost next hops: FNV-1a (stable across platforms, unlike
/// std::hash) of the flow's GPU pair and the hop number, high half folded into the low bits because
/// FNV-1a's low bits depend only on the inputs' low bits and `n` is small.
std::size_t ecmp_pick(std::int32_t src_gpu, std::int32_t dst_gpu, std::int32_t step, std::size_t n) {
  if (n <= 1) return 0;
  std::array<char, 12> bytes{};
  const std::array<std::uint32_t, 3> words{static_cast<std::uint32_t>(src_gpu), static_cast<std::uint32_t>(dst_gpu),
                                           static_cast<std::uint32_t>(step)};
  for (std::size_t w = 0; w < words.size(); ++w) {
    for (std::size_t b = 0; b < 4; ++b) bytes[w * 4 + b] = static_cast<char>((words[w] >> (8 * b)) & 0xffU);
  }
  std::uint64_t h = fnv1a64(std::string_view(bytes.data(), bytes.size()));
  h ^= h >> 32;
  h ^= h >> 16;
  return static_cast<std::size_t>(h % n);
}

}  // namespace

struct Topology::Impl {
  Graph graph;
  std::vector<TopoNode> nodes;
  std::vector<TopoLink> links;
  std::vector<std::vector<std::int32_t>> out, in;
  std::vector<std::int32_t> gpu_nodes;  ///< node id by gpu_index (-1 where no GPU has that index)
  std::int32_t gpus = 0;

  /// Routing tables, built on the first route() after a change; guarded because route() is const
  /// and may be called from several threads.
  struct Cache {
    bool ready = false;
    std::vector<std::int32_t> transit_index;  ///< node id → dense index among transit nodes, else -1
    std::size_t transit_count = 0;
    std::map<std::int32_t, std::vector<std::int32_t>> domain_gpus;  ///< domain → GPU node ids by gpu_index
    /// Network-tier hop distance from every transit node to one egress switch (-1: unreachable),
    /// keyed by the egress switch. Rows are never modified once inserted, so a pointer to one stays
    /// valid and readable outside the lock.
    std::unordered_map<std::int32_t, std::vector<std::int32_t>> distance_to;
  };
  mutable std::mutex cache_mutex;
  mutable Cache cache;

  void invalidate() {
    const std::lock_guard lock(cache_mutex);
    cache = Cache{};
  }

  [[nodiscard]] bool valid_node(std::int32_t id) const { return id >= 0 && id < static_cast<std::int32_t>(nodes.size()); }

  void ensure_cache() const {
    const std::lock_guard lock(cache_mutex);
    if (cache.ready) return;
    cache.transit_index.assign(nodes.size(), -1);
    std::int32_t next = 0;
    for (const auto& n : nodes) {
      if (is_transit(n)) cache.transit_index[static_cast<std::size_t>(n.id)] = next++;
    }
    cache.transit_count = static_cast<std::size_t>(next);
    for (std::int32_t node : gpu_nodes) {
      if (node >= 0 && nodes[static_cast<std::size_t>(node)].domain >= 0) {
        cache.domain_gpus[nodes[static_cast<std::size_t>(node)].domain].push_back(node);
      }
    }
    cache.ready = true;
  }

  /// Reverse BFS over network-tier links between transit nodes, towards `egress`.
  const std::vector<std::int32_t>& distances_to(std::int32_t egress) const {
    {
      const std::lock_guard lock(cache_mutex);
      if (auto it = cache.distance_to.find(egress); it != cache.distance_to.end()) return it->second;
    }
    const auto& index = cache.transit_index;
    std::vector<std::int32_t> row(cache.transit_count, -1);
    std::deque<std::int32_t> queue{egress};
    row[static_cast<std::size_t>(index[static_cast<std::size_t>(egress)])] = 0;
    while (!queue.empty()) {
      const std::int32_t v = queue.front();
      queue.pop_front();
      const std::int32_t dv = row[static_cast<std::size_t>(index[static_cast<std::size_t>(v)])];
      for (std::int32_t l : in[static_cast<std::size_t>(v)]) {
        const TopoLink& link = links[static_cast<std::size_t>(l)];
        const std::int32_t u = link.src;
        if (link.tier != LinkTier::kNetwork || index[static_cast<std::size_t>(u)] < 0) continue;
        auto& du = row[static_cast<std::size_t>(index[static_cast<std::size_t>(u)])];
        if (du >= 0) continue;
        du = dv + 1;
        queue.push_back(u);
      }
    }
    const std::lock_guard lock(cache_mutex);
    return cache.distance_to.emplace(egress, std::move(row)).first->second;
  }

  /// Shortest path from `from` to `to` over links whose tier passes `tier_ok`, transiting only
  /// switches unless `any_transit`; first-found (lowest link id) path. Empty when none.
  template <class TierOk>
  [[nodiscard]] std::vector<std::int32_t> bfs_path(std::int32_t from, std::int32_t to, TierOk tier_ok,
                                                   bool any_transit) const {
    std::vector<std::int32_t> via(nodes.size(), -1);  // link that first reached each node
    std::vector<bool> seen(nodes.size(), false);
    std::deque<std::int32_t> queue{from};
    seen[static_cast<std::size_t>(from)] = true;
    while (!queue.empty() && !seen[static_cast<std::size_t>(to)]) {
      const std::int32_t v = queue.front();
      queue.pop_front();
      if (v != from && !any_transit && !is_transit(nodes[static_cast<std::size_t>(v)])) continue;
      for (std::int32_t l : out[static_cast<std::size_t>(v)]) {
        const TopoLink& link = links[static_cast<std::size_t>(l)];
        if (!tier_ok(link.tier) || seen[static_cast<std::size_t>(link.dst)]) continue;
        seen[static_cast<std::size_t>(link.dst)] = true;
        via[static_cast<std::size_t>(link.dst)] = l;
        queue.push_back(link.dst);
      }
    }
    std::vector<std::int32_t> path;
    if (!seen[static_cast<std::size_t>(to)]) return path;
    for (std::int32_t v = to; v != from; v = links[static_cast<std::size_t>(via[static_cast<std::size_t>(v)])].src) {
      path.push_back(via[static_cast<std::size_t>(v)]);
    }
    std::reverse(path.begin(), path.end());
    return path;
  }

  /// GPU `a` → GPU `b` over NVLink only: a direct link, else the switches both attach to (ECMP
  /// over them when the NVSwitches of a baseboard are modelled one by one), else any NVLink path.
  bool append_nvlink(std::int32_t a, std::int32_t b, std::int32_t src_gpu, std::int32_t dst_gpu,
                     std::vector<std::int32_t>& path) const {
    std::vector<std::array<std::int32_t, 2>> two_hop;
    for (std::int32_t l1 : out[static_cast<std::size_t>(a)]) {
      const TopoLink& first = links[static_cast<std::size_t>(l1)];
      if (first.tier != LinkTier::kNvlink) continue;
      if (first.dst == b) {
        path.push_back(l1);
        return true;
      }
      if (!is_transit(nodes[static_cast<std::size_t>(first.dst)])) continue;
      for (std::int32_t l2 : out[static_cast<std::size_t>(first.dst)]) {
        const TopoLink& second = links[static_cast<std::size_t>(l2)];
        if (second.tier == LinkTier::kNvlink && second.dst == b) two_hop.push_back({l1, l2});
      }
    }
    if (!two_hop.empty()) {
      const auto& pick = two_hop[ecmp_pick(src_gpu, dst_gpu, -1, two_hop.size())];
      path.insert(path.end(), pick.begin(), pick.end());
      return true;
    }
    auto longer = bfs_path(a, b, [](LinkTier t) { return t == LinkTier::kNvlink; }, false);
    if (longer.empty()) return false;
    path.insert(path.end(), longer.begin(), longer.end());
    return true;
  }

  /// The PCIe link between GPU node `gpu_node` and one of its NICs (outgoing when `leaving`),
  /// preferring the NIC on `rail`.
  [[nodiscard]] std::int32_t nic_link(std::int32_t gpu_node, bool leaving, std::int32_t rail) const {
    std::int32_t found = -1;
    for (std::int32_t l : leaving ? out[static_cast<std::size_t>(gpu_node)] : in[static_cast<std::size_t>(gpu_node)]) {
      const TopoLink& link = links[static_cast<std::size_t>(l)];
      const TopoNode& nic = nodes[static_cast<std::size_t>(leaving ? link.dst : link.src)];
      if (link.tier != LinkTier::kPcie || nic.kind != NodeKind::kNic) continue;
      if (nic.rail == rail) return l;
      if (found < 0) found = l;
    }
    return found;
  }

  /// GPU `g` → its NIC → switches (shortest, ECMP at every tie) → the NIC of GPU `b` → `b`.
  bool append_network(std::int32_t g, std::int32_t b, std::int32_t src_gpu, std::int32_t dst_gpu,
                      std::vector<std::int32_t>& path) const {
    const std::int32_t up = nic_link(g, true, nodes[static_cast<std::size_t>(b)].rail);
    if (up < 0) return false;
    const std::int32_t nic_a = links[static_cast<std::size_t>(up)].dst;
    const std::int32_t down = nic_link(b, false, nodes[static_cast<std::size_t>(nic_a)].rail);
    if (down < 0) return false;
    const std::int32_t nic_b = links[static_cast<std::size_t>(down)].src;
    std::vector<std::int32_t> middle;
    if (nic_a != nic_b && !network_between(nic_a, nic_b, src_gpu, dst_gpu, middle)) return false;
    path.push_back(up);
    path.insert(path.end(), middle.begin(), middle.end());
    path.push_back(down);
    return true;
  }

  bool network_between(std::int32_t nic_a, std::int32_t nic_b, std::int32_t src_gpu, std::int32_t dst_gpu,
                       std::vector<std::int32_t>& middle) const {
    const auto& index = cache.transit_index;
    for (std::int32_t l : out[static_cast<std::size_t>(nic_a)]) {
      const TopoLink& link = links[static_cast<std::size_t>(l)];
      if (link.tier == LinkTier::kNetwork && link.dst == nic_b) {
        middle.push_back(l);
        return true;
      }
    }
    // Every (ingress, egress) pair of switch links at the least hop distance; one is picked by hash.
    struct Candidate {
      std::int32_t ingress, egress;
      const std::vector<std::int32_t>* row;
    };
    std::vector<Candidate> best;
    std::int32_t best_distance = std::numeric_limits<std::int32_t>::max();
    for (std::int32_t e : in[static_cast<std::size_t>(nic_b)]) {
      const TopoLink& egress = links[static_cast<std::size_t>(e)];
      if (egress.tier != LinkTier::kNetwork || index[static_cast<std::size_t>(egress.src)] < 0) continue;
      const auto& row = distances_to(egress.src);
      for (std::int32_t i : out[static_cast<std::size_t>(nic_a)]) {
        const TopoLink& ingress = links[static_cast<std::size_t>(i)];
        if (ingress.tier != LinkTier::kNetwork || index[static_cast<std::size_t>(ingress.dst)] < 0) continue;
        const std::int32_t d = row[static_cast<std::size_t>(index[static_cast<std::size_t>(ingress.dst)])];
        if (d < 0 || d > best_distance) continue;
        if (d < best_distance) best.clear();
        best_distance = d;
        best.push_back({i, e, &row});
      }
    }
    if (best.empty()) return false;
    const Candidate& c = best[ecmp_pick(src_gpu, dst_gpu, -2, best.size())];
    middle.push_back(c.ingress);
    std::int32_t cur = links[static_cast<std::size_t>(c.ingress)].dst;
    const std::int32_t target = links[static_cast<std::size_t>(c.egress)].src;
    const auto& row = *c.row;
    for (std::int32_t step = 0; cur != target; ++step) {
      const std::int32_t here = row[static_cast<std::size_t>(index[static_cast<std::size_t>(cur)])];
      std::vector<std::int32_t> next;
      for (std::int32_t l : out[static_cast<std::size_t>(cur)]) {
        const TopoLink& link = links[static_cast<std::size_t>(l)];
        const std::int32_t k = index[static_cast<std::size_t>(link.dst)];
        if (link.tier == LinkTier::kNetwork && k >= 0 && row[static_cast<std::size_t>(k)] == here - 1) next.push_back(l);
      }
      const std::int32_t chosen = next[ecmp_pick(src_gpu, dst_gpu, step, next.size())];
      middle.push_back(chosen);
      cur = links[static_cast<std::size_t>(chosen)].dst;
    }
    middle.push_back(c.egress);
    return true;
  }

  /// NCCL PXN's proxy: the GPU on `rail` in the domain of GPU node `a`. Under the builders'
  /// numbering (rail = index within the host) the one in the same host is gpu_index − own rail +
  /// `rail`; any other GPU of the domain on that rail otherwise. -1 when the domain has none.
  [[nodiscard]] std::int32_t pxn_proxy(std::int32_t a, std::int32_t rail) const {
    const TopoNode& na = nodes[static_cast<std::size_t>(a)];
    const std::int64_t guess = static_cast<std::int64_t>(na.gpu_index) - na.rail + rail;
    if (guess >= 0 && guess < static_cast<std::int64_t>(gpu_nodes.size())) {
      const std::int32_t g = gpu_nodes[static_cast<std::size_t>(guess)];
      if (g >= 0 && nodes[static_cast<std::size_t>(g)].domain == na.domain && nodes[static_cast<std::size_t>(g)].rail == rail) {
        return g;
      }
    }
    const auto it = cache.domain_gpus.find(na.domain);
    if (it == cache.domain_gpus.end()) return -1;
    for (std::int32_t g : it->second) {
      if (nodes[static_cast<std::size_t>(g)].rail == rail) return g;
    }
    return -1;
  }
};

Topology::Topology() : impl_(std::make_unique<Impl>()) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

std::int32_t Topology::add_node(TopoNode node) {
  Impl& m = *impl_;
  const auto id = static_cast<std::int32_t>(m.nodes.size());
  node.id = id;
  if (node.kind == NodeKind::kGpu) {
    ++m.gpus;
    if (node.gpu_index >= 0) {
      if (static_cast<std::size_t>(node.gpu_index) >= m.gpu_nodes.size()) {
        m.gpu_nodes.resize(static_cast<std::size_t>(node.gpu_index) + 1, -1);
      }
      // The first GPU with an index keeps it; validate() reports the duplicate.
      if (m.gpu_nodes[static_cast<std::size_t>(node.gpu_index)] < 0) m.gpu_nodes[static_cast<std::size_t>(node.gpu_index)] = id;
    }
  }
  m.nodes.push_back(std::move(node));
  m.out.emplace_back();
  m.in.emplace_back();
  (void)boost::add_vertex(m.graph);
  m.invalidate();
  return id;
}

std::int32_t Topology::add_link(std::int32_t src, std::int32_t dst, BytesPerSecond bw, Seconds latency, LinkTier tier) {
  Impl& m = *impl_;
  const auto id = static_cast<std::int32_t>(m.links.size());
  m.links.push_back(TopoLink{id, src, dst, bw, latency, tier});
  // A link to a missing node is kept (validate() names it) but stays out of the graph: Boost would
  // otherwise grow the vertex set to reach it.
  if (m.valid_node(src) && m.valid_node(dst)) {
    m.out[static_cast<std::size_t>(src)].push_back(id);
    m.in[static_cast<std::size_t>(dst)].push_back(id);
    (void)boost::add_edge(static_cast<Vertex>(src), static_cast<Vertex>(dst), EdgeProp{id}, m.graph);
  }
  m.invalidate();
  return id;
}

const std::vector<TopoNode>& Topology::nodes() const { return impl_->nodes; }
const std::vector<TopoLink>& Topology::links() const { return impl_->links; }
std::int32_t Topology::num_gpus() const { return impl_->gpus; }

std::int32_t Topology::gpu_node(std::int32_t gpu_index) const {
  if (gpu_index < 0 || static_cast<std::size_t>(gpu_index) >= impl_->gpu_nodes.size() ||
      impl_->gpu_nodes[static_cast<std::size_t>(gpu_index)] < 0) {
    throw InternalError("topology: no GPU with gpu_index " + std::to_string(gpu_index));
  }
  return impl_->gpu_nodes[static_cast<std::size_t>(gpu_index)];
}

const std::vector<std::int32_t>& Topology::out_links(std::int32_t node) const {
  return impl_->valid_node(node) ? impl_->out[static_cast<std::size_t>(node)] : kNoLinks;
}

const std::vector<std::int32_t>& Topology::in_links(std::int32_t node) const {
  return impl_->valid_node(node) ? impl_->in[static_cast<std::size_t>(node)] : kNoLinks;
}

std::vector<std::int32_t> Topology::route(std::int32_t src, std::int32_t dst, const RoutingOptions& opt) const {
  const Impl& m = *impl_;
  const std::int32_t a = gpu_node(src), b = gpu_node(dst);
  if (src == dst) return {};
  m.ensure_cache();
  const TopoNode& na = m.nodes[static_cast<std::size_t>(a)];
  const TopoNode& nb = m.nodes[static_cast<std::size_t>(b)];
  std::vector<std::int32_t> path;
  if (na.domain >= 0 && na.domain == nb.domain && m.append_nvlink(a, b, src, dst, path)) return path;
  path.clear();
  // Rails unknown (-1) put no constraint on the NIC; only a known mismatch asks for a PXN hop.
  if (opt.pxn && na.rail >= 0 && nb.rail >= 0 && na.rail != nb.rail && na.domain >= 0) {
    const std::int32_t proxy = m.pxn_proxy(a, nb.rail);
    if (proxy >= 0 && m.append_nvlink(a, proxy, src, dst, path) && m.append_network(proxy, b, src, dst, path)) {
      return path;
    }
    path.clear();
  }
  if (m.append_network(a, b, src, dst, path)) return path;
  // Hand-written files may join GPUs in ways the rules above do not cover: any shortest path.
  path = m.bfs_path(a, b, [](LinkTier) { return true; }, true);
  if (path.empty()) {
    throw InputError("/nodes/" + std::to_string(a), quoted(na.name),
                     "no path from this GPU to GPU " + quoted(nb.name) + ": the topology is disconnected");
  }
  return path;
}

void Topology::validate() const {
  const Impl& m = *impl_;
  const auto n = static_cast<std::int32_t>(m.nodes.size());
  const std::string node_ids = n == 0 ? std::string("none (no nodes)") : "node ids 0 to " + std::to_string(n - 1);
  std::map<std::string, std::int32_t> names;
  for (const auto& node : m.nodes) {
    const std::string at = "/nodes/" + std::to_string(node.id);
    if (node.name.empty()) throw InputError(at + "/id", "\"\"", "a node needs a non-empty id");
    if (auto [it, fresh] = names.emplace(node.name, node.id); !fresh) {
      throw InputError(at + "/id", quoted(node.name), "duplicate node id: already used by /nodes/" + std::to_string(it->second));
    }
    if (node.kind == NodeKind::kGpu) {
      if (node.gpu_index < 0 || node.gpu_index >= m.gpus) {
        throw InputError(at + "/gpu_index", std::to_string(node.gpu_index),
                         "GPU indices must run 0..gpus-1 (" + std::to_string(m.gpus) + " GPUs)",
                         "integers from 0 to " + std::to_string(m.gpus - 1));
      }
      const std::int32_t owner = m.gpu_nodes[static_cast<std::size_t>(node.gpu_index)];
      if (owner != node.id) {
        throw InputError(at + "/gpu_index", std::to_string(node.gpu_index),
                         "duplicate gpu_index: already used by /nodes/" + std::to_string(owner));
      }
    } else if (node.gpu_index != -1) {
      throw InputError(at + "/gpu_index", std::to_string(node.gpu_index), "only GPU nodes have a gpu_index");
    }
  }
  if (m.gpus == 0) throw InputError("/nodes", "", "a topology needs at least one GPU");
  for (const auto& link : m.links) {
    const std::string at = "/links/" + std::to_string(link.id);
    if (!m.valid_node(link.src)) throw InputError(at + "/src", std::to_string(link.src), "link endpoint is not a node", node_ids);
    if (!m.valid_node(link.dst)) throw InputError(at + "/dst", std::to_string(link.dst), "link endpoint is not a node", node_ids);
    if (link.src == link.dst) {
      throw InputError(at + "/dst", quoted(m.nodes[static_cast<std::size_t>(link.dst)].name),
                       "a link must join two different nodes");
    }
    const double gbps = link.bandwidth.value() / kGB;
    if (!(std::isfinite(gbps) && gbps > 0)) {
      throw InputError(at + "/bandwidth_gbps", format_number(gbps), "bandwidth must be > 0");
    }
    const double us = link.latency.value() * 1e6;
    if (!(std::isfinite(us) && us >= 0)) throw InputError(at + "/latency_us", format_number(us), "latency must be >= 0");
  }
  // Every GPU reaches GPU 0 and GPU 0 reaches every GPU, so every pair is joined both ways.
  const auto reached = [&](const auto& graph) {
    std::vector<boost::default_color_type> color(m.nodes.size(), boost::white_color);
    const auto colors = boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, graph));
    boost::breadth_first_search(graph, static_cast<Vertex>(m.gpu_nodes[0]), boost::color_map(colors));
    return color;
  };
  const auto forward = reached(m.graph);
  const auto backward = reached(boost::make_reverse_graph(m.graph));
  const std::string& first = m.nodes[static_cast<std::size_t>(m.gpu_nodes[0])].name;
  for (std::int32_t g : m.gpu_nodes) {
    const TopoNode& node = m.nodes[static_cast<std::size_t>(g)];
    const std::string at = "/nodes/" + std::to_string(g);
    if (forward[static_cast<std::size_t>(g)] == boost::white_color) {
      throw InputError(at, quoted(node.name), "GPU cannot be reached from GPU " + quoted(first) + ": the topology is disconnected");
    }
    if (backward[static_cast<std::size_t>(g)] == boost::white_color) {
      throw InputError(at, quoted(node.name), "GPU cannot reach GPU " + quoted(first) + ": the topology is disconnected");
    }
  }
}

}  // namespace moesim::hw
