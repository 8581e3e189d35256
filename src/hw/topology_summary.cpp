// What `moesim topo show` and `export` print: counts per kind and tier, bisection bandwidths found as
// max-flows on the graph (not from the preset's numbers, so a hand-written file is measured the same
// way), the pairing of links into cables, and the Graphviz text.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <fmt/format.h>

#include "core/format.hpp"
#include "hw/topology.hpp"

namespace moesim::hw {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, std::int64_t,
                    boost::property<boost::edge_residual_capacity_t, std::int64_t,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

/// Capacities in kB/s: integers keep push-relabel exact, and the unit leaves headroom below 2^63 for
/// the source edges of a 2^20-GPU cluster.
constexpr double kFlowUnit = 1e3;

std::int64_t capacity_of(BytesPerSecond bw) { return std::llround(bw.value() / kFlowUnit); }

/// Max-flow from the GPUs `from` to the GPUs `to` over the links whose tier passes `tier_ok`: by
/// max-flow/min-cut, the least bandwidth of any cut separating the two sides.
template <class TierOk>
BytesPerSecond max_flow(const Topology& t, const std::vector<std::int32_t>& from, const std::vector<std::int32_t>& to,
                        TierOk tier_ok) {
  const auto n = t.nodes().size();
  FlowGraph g(n + 2);
  const auto source = static_cast<FlowTraits::vertex_descriptor>(n);
  const auto sink = static_cast<FlowTraits::vertex_descriptor>(n + 1);
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  const auto add = [&](std::size_t u, std::size_t v, std::int64_t cap) {
    const auto forward = boost::add_edge(u, v, g).first;
    const auto back = boost::add_edge(v, u, g).first;
    capacity[forward] = cap;
    capacity[back] = 0;
    reverse[forward] = back;
    reverse[back] = forward;
  };
  std::vector<std::int64_t> out_cap(n, 0), in_cap(n, 0);
  for (const TopoLink& l : t.links()) {
    if (!tier_ok(l.tier) || l.src < 0 || l.dst < 0 || static_cast<std::size_t>(l.src) >= n ||
        static_cast<std::size_t>(l.dst) >= n) {
      continue;
    }
    const std::int64_t cap = capacity_of(l.bandwidth);
    add(static_cast<std::size_t>(l.src), static_cast<std::size_t>(l.dst), cap);
    out_cap[static_cast<std::size_t>(l.src)] += cap;
    in_cap[static_cast<std::size_t>(l.dst)] += cap;
  }
  // A GPU can send no more than its links carry, so these edges never form the cut.
  for (std::int32_t v : from) add(source, static_cast<std::size_t>(v), out_cap[static_cast<std::size_t>(v)]);
  for (std::int32_t v : to) add(static_cast<std::size_t>(v), sink, in_cap[static_cast<std::size_t>(v)]);
  const std::int64_t flow = boost::push_relabel_max_flow(g, source, sink);
  return BytesPerSecond(static_cast<double>(flow) * kFlowUnit);
}

/// The GPUs in `order` split into a first and a second half (the second gets the odd one).
std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>> halves(const std::vector<std::int32_t>& order) {
  const auto mid = static_cast<std::ptrdiff_t>(order.size() / 2);
  return {{order.begin(), order.begin() + mid}, {order.begin() + mid, order.end()}};
}

std::string dot_id(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Graphviz attributes of the export: each tier's edge colour and each kind's vertex shape.
constexpr auto kTierColor = std::to_array<EnumName<LinkTier>>(
    {{LinkTier::kNvlink, "#76b900"}, {LinkTier::kPcie, "#888888"}, {LinkTier::kNetwork, "#1f77b4"}});
constexpr auto kKindShape = std::to_array<EnumName<NodeKind>>(
    {{NodeKind::kGpu, "box"}, {NodeKind::kNvSwitch, "hexagon"}, {NodeKind::kNic, "ellipse"},
     {NodeKind::kLeafSwitch, "trapezium"}, {NodeKind::kSpineSwitch, "invtrapezium"}});

}  // namespace

TopologySummary summarize(const Topology& t) {
  TopologySummary s;
  std::map<std::int32_t, std::vector<std::int32_t>> domains;  // domain → GPU node ids in gpu_index order
  std::vector<std::int32_t> by_index, by_rail;
  for (std::int32_t g = 0; g < t.num_gpus(); ++g) by_index.push_back(t.gpu_node(g));
  for (const TopoNode& n : t.nodes()) {
    switch (n.kind) {
      case NodeKind::kGpu: ++s.gpus; break;
      case NodeKind::kNvSwitch: ++s.nvswitches; break;
      case NodeKind::kNic: ++s.nics; break;
      case NodeKind::kLeafSwitch: ++s.leaves; break;
      case NodeKind::kSpineSwitch: ++s.spines; break;
    }
  }
  for (std::int32_t v : by_index) {
    const TopoNode& n = t.nodes()[static_cast<std::size_t>(v)];
    if (n.domain >= 0) domains[n.domain].push_back(v);
  }
  s.domains = static_cast<std::int32_t>(domains.size());
  for (const TopoLink& l : t.links()) {
    switch (l.tier) {
      case LinkTier::kNvlink: ++s.nvlink_links; break;
      case LinkTier::kPcie: ++s.pcie_links; break;
      case LinkTier::kNetwork: ++s.network_links; break;
    }
  }
  // NVLink: the largest domain cut into its lower and upper gpu_index halves, NVLink links only.
  const std::vector<std::int32_t>* largest = nullptr;
  for (const auto& [d, members] : domains) {
    if (!largest || members.size() > largest->size()) largest = &members;
  }
  if (largest && largest->size() >= 2) {
    const auto [a, b] = halves(*largest);
    s.nvlink_bisection = max_flow(t, a, b, [](LinkTier tier) { return tier == LinkTier::kNvlink; });
  }
  // Network: NVLink removed, the smaller max-flow of two balanced cuts — the gpu_index halves (whole
  // domains on each side, the cut data parallelism sees) and the rail halves (GPUs ordered by rail,
  // the cut through the spine layer of a rail-optimized fabric, which the index halves miss inside
  // one pod because rail-aligned traffic turns at the leaf).
  if (by_index.size() >= 2) {
    const auto not_nvlink = [](LinkTier tier) { return tier != LinkTier::kNvlink; };
    by_rail = by_index;
    std::stable_sort(by_rail.begin(), by_rail.end(), [&](std::int32_t x, std::int32_t y) {
      return t.nodes()[static_cast<std::size_t>(x)].rail < t.nodes()[static_cast<std::size_t>(y)].rail;
    });
    const auto [a, b] = halves(by_index);
    s.network_bisection = max_flow(t, a, b, not_nvlink);
    if (by_rail != by_index) {
      const auto [c, d] = halves(by_rail);
      s.network_bisection = std::min(s.network_bisection, max_flow(t, c, d, not_nvlink));
    }
  }
  return s;
}

std::vector<Cable> cables(const Topology& t) {
  const auto& links = t.links();
  std::vector<bool> used(links.size(), false);
  std::vector<Cable> out;
  for (const TopoLink& l : links) {
    if (used[static_cast<std::size_t>(l.id)]) continue;
    used[static_cast<std::size_t>(l.id)] = true;
    Cable c{l.id, -1};
    for (std::int32_t r : t.out_links(l.dst)) {
      const TopoLink& back = links[static_cast<std::size_t>(r)];
      if (r > l.id && !used[static_cast<std::size_t>(r)] && back.dst == l.src && back.bandwidth == l.bandwidth &&
          back.latency == l.latency && back.tier == l.tier) {
        c.reverse = r;
        used[static_cast<std::size_t>(r)] = true;
        break;
      }
    }
    out.push_back(c);
  }
  return out;
}

std::string to_dot(const Topology& t) {
  std::string out = fmt::format("digraph {} {{\n", dot_id(t.name.empty() ? "topology" : t.name));
  out += fmt::format(
      "  graph [fontname=\"Helvetica\", labelloc=t, label={}];\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n",
      dot_id(t.name + " (edges: green NVLink, grey PCIe, blue network; GB/s each way)"));
  std::map<std::int32_t, std::vector<const TopoNode*>> by_domain;
  std::vector<const TopoNode*> fabric;
  for (const TopoNode& n : t.nodes()) {
    if (n.domain >= 0) {
      by_domain[n.domain].push_back(&n);
    } else {
      fabric.push_back(&n);
    }
  }
  const auto node_line = [](const TopoNode& n) {
    return fmt::format("{} [shape={}];\n", dot_id(n.name), name_of(kKindShape, n.kind, "box"));
  };
  for (const auto& [d, members] : by_domain) {
    out += fmt::format("  subgraph {} {{\n    label={};\n", dot_id("cluster_domain" + std::to_string(d)),
                       dot_id("NVLink domain " + std::to_string(d)));
    for (const TopoNode* n : members) out += "    " + node_line(*n);
    out += "  }\n";
  }
  for (const TopoNode* n : fabric) out += "  " + node_line(*n);
  for (const Cable& c : cables(t)) {
    const TopoLink& l = t.links()[static_cast<std::size_t>(c.forward)];
    out += fmt::format("  {} -> {} [color=\"{}\", label=\"{}\"{}];\n", dot_id(t.nodes()[static_cast<std::size_t>(l.src)].name),
                       dot_id(t.nodes()[static_cast<std::size_t>(l.dst)].name), name_of(kTierColor, l.tier, "black"),
                       format_number(l.bandwidth.value() / kGB), c.reverse >= 0 ? ", dir=both" : "");
  }
  out += "}\n";
  return out;
}

}  // namespace moesim::hw
