#include "hw/tier_graph.hpp"

#include <map>
#include <utility>

namespace moesim::hw {

TierGraph tier_graph(const Topology& t) {
  TierGraph g;
  g.name = t.name;
  g.description = t.description;
  const auto& nodes = t.nodes();
  // Group of each topology node: its NVLink domain, or the switch itself.
  std::vector<std::int32_t> group(nodes.size(), -1);
  std::map<std::int32_t, std::int32_t> domain_group;
  for (const auto& n : nodes) {
    const bool in_domain = n.kind == NodeKind::kGpu || n.kind == NodeKind::kNvSwitch || n.kind == NodeKind::kNic;
    if (in_domain && n.domain >= 0) {
      auto [it, fresh] = domain_group.emplace(n.domain, static_cast<std::int32_t>(g.nodes.size()));
      if (fresh) g.nodes.push_back({"domain " + std::to_string(n.domain), "nvlink_domain", 0});
      group[static_cast<std::size_t>(n.id)] = it->second;
      if (n.kind == NodeKind::kGpu) ++g.nodes[static_cast<std::size_t>(it->second)].gpus;
    } else if (n.kind == NodeKind::kLeafSwitch || n.kind == NodeKind::kSpineSwitch) {
      group[static_cast<std::size_t>(n.id)] = static_cast<std::int32_t>(g.nodes.size());
      g.nodes.push_back({n.name, n.kind == NodeKind::kLeafSwitch ? "leaf" : "spine", 0});
    }
  }
  // Network links between different groups; each cable is two directed links.
  std::map<std::pair<std::int32_t, std::int32_t>, std::pair<std::int32_t, double>> pairs;
  for (const auto& l : t.links()) {
    const std::int32_t a = group[static_cast<std::size_t>(l.src)], b = group[static_cast<std::size_t>(l.dst)];
    if (a < 0 || b < 0 || a == b) continue;
    auto& p = pairs[{std::min(a, b), std::max(a, b)}];
    ++p.first;
    p.second += l.bandwidth.value();
  }
  for (const auto& [ab, v] : pairs) {
    g.edges.push_back({ab.first, ab.second, (v.first + 1) / 2, v.second / 2.0});
  }
  return g;
}

}  // namespace moesim::hw
