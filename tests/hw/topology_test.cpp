// The topology graph: builder counts for the preset clusters, routes (connected chains, NVLink inside a
// domain, rail-aligned NICs across domains, the PXN hop, deterministic and even ECMP), bisection
// bandwidths worked out by hand, latency sums, and the structural checks of validate().
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../test_paths.hpp"
#include "config/hw_loader.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "hw/topology.hpp"

using namespace moesim;
using hw::LinkTier;
using hw::NodeKind;

namespace {

hw::Topology preset(const std::string& name, std::int64_t gpus, hw::FabricOptions fabric = {}) {
  return hw::build_topology(config::load_system_preset(name, gpus), fabric);
}

const hw::TopoNode& node(const hw::Topology& t, std::int32_t id) { return t.nodes()[static_cast<std::size_t>(id)]; }
const hw::TopoLink& link(const hw::Topology& t, std::int32_t id) { return t.links()[static_cast<std::size_t>(id)]; }

std::vector<std::int32_t> nodes_on(const hw::Topology& t, const std::vector<std::int32_t>& path) {
  std::vector<std::int32_t> out;
  if (path.empty()) return out;
  out.push_back(link(t, path.front()).src);
  for (std::int32_t l : path) out.push_back(link(t, l).dst);
  return out;
}

std::vector<LinkTier> tiers_on(const hw::Topology& t, const std::vector<std::int32_t>& path) {
  std::vector<LinkTier> out;
  for (std::int32_t l : path) out.push_back(link(t, l).tier);
  return out;
}

Seconds latency_of(const hw::Topology& t, const std::vector<std::int32_t>& path) {
  Seconds s;
  for (std::int32_t l : path) s += link(t, l).latency;
  return s;
}

/// The checks every route must pass: a chain of links from GPU src to GPU dst visiting no node twice,
/// and transiting no GPU except a PXN proxy reached over NVLink.
void check_chain(const hw::Topology& t, std::int32_t src, std::int32_t dst, const std::vector<std::int32_t>& path) {
  if (src == dst) {
    CHECK(path.empty());
    return;
  }
  REQUIRE_FALSE(path.empty());
  CHECK(link(t, path.front()).src == t.gpu_node(src));
  CHECK(link(t, path.back()).dst == t.gpu_node(dst));
  for (std::size_t i = 1; i < path.size(); ++i) CHECK(link(t, path[i - 1]).dst == link(t, path[i]).src);
  const auto visited = nodes_on(t, path);
  CHECK(std::set<std::int32_t>(visited.begin(), visited.end()).size() == visited.size());
}

bool is_kind(const hw::Topology& t, std::int32_t id, NodeKind k) { return node(t, id).kind == k; }

std::int32_t count_kind(const std::vector<std::int32_t>& nodes, const hw::Topology& t, NodeKind k) {
  return static_cast<std::int32_t>(std::count_if(nodes.begin(), nodes.end(), [&](std::int32_t v) { return is_kind(t, v, k); }));
}

std::string error_of(const hw::Topology& t) {
  try {
    t.validate();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct Expected {
  const char* system;
  std::int64_t gpus;
  std::int32_t nvswitches, nics, leaves, spines, domains;
  std::int64_t nvlink_links, pcie_links, network_links;
  double nvlink_bisection_gbps, network_bisection_gbps;
};

}  // namespace

TEST_CASE("builder counts and bisections of the four test systems") {
  // Hand-worked, one direction (GB/s):
  // hgx-h100 x16: 2 nodes; NVLink domain of 8 cut 4|4 → 4 × 450 = 1800. Network: the node halves talk
  //   over 8 rail leaves, 8 × 50 = 400; the rail halves (rails 0-3 | 4-7) over the spines, 4 leaves ×
  //   2 uplinks × 50 = 400. Spines = GPUs per leaf (2) at oversubscription 1.
  // hgx-h100 x64: 8 nodes, 8 leaves of 8 ports, 8 spines; network 32 × 50 = 1600 (node halves: 32
  //   rail-aligned pairs; rail halves: 4 leaves × 8 × 50).
  // gb200-nvl72 x72: one rack; NVLink 36 × 900 = 32400; 18 trays × 4 rails → 4 leaves of 18 ports,
  //   18 spines; network 36 × 50 = 1800.
  // gb200-nvl72 x144: 2 racks, 4 leaves of 36 ports, 36 spines; network 72 × 50 = 3600.
  const std::vector<Expected> cases = {
      {"hgx-h100", 16, 2, 16, 8, 2, 2, 32, 32, 32 + 8 * 2 * 2, 4 * 450.0, 8 * 50.0},
      {"hgx-h100", 64, 8, 64, 8, 8, 8, 128, 128, 128 + 8 * 8 * 2, 4 * 450.0, 32 * 50.0},
      {"gb200-nvl72", 72, 1, 72, 4, 18, 1, 144, 144, 144 + 4 * 18 * 2, 36 * 900.0, 36 * 50.0},
      {"gb200-nvl72", 144, 2, 144, 4, 36, 2, 288, 288, 288 + 4 * 36 * 2, 36 * 900.0, 72 * 50.0},
  };
  for (const Expected& e : cases) {
    CAPTURE(e.system);
    CAPTURE(e.gpus);
    const hw::Topology t = preset(e.system, e.gpus);
    CHECK_NOTHROW(t.validate());
    const hw::TopologySummary s = hw::summarize(t);
    CHECK(s.gpus == e.gpus);
    CHECK(t.num_gpus() == e.gpus);
    CHECK(s.nvswitches == e.nvswitches);
    CHECK(s.nics == e.nics);
    CHECK(s.leaves == e.leaves);
    CHECK(s.spines == e.spines);
    CHECK(s.domains == e.domains);
    CHECK(s.nvlink_links == e.nvlink_links);
    CHECK(s.pcie_links == e.pcie_links);
    CHECK(s.network_links == e.network_links);
    CHECK(s.nvlink_bisection.value() / kGB == doctest::Approx(e.nvlink_bisection_gbps));
    CHECK(s.network_bisection.value() / kGB == doctest::Approx(e.network_bisection_gbps));
  }
}

TEST_CASE("link bandwidths and latencies come from the preset") {
  const auto system = config::load_system_preset("hgx-h100", 16);
  const hw::Topology t = hw::build_topology(system);
  for (const hw::TopoLink& l : t.links()) {
    CAPTURE(l.id);
    switch (l.tier) {
      case LinkTier::kNvlink:
        CHECK(l.bandwidth == system.gpu.nvlink_bandwidth);
        CHECK(l.latency.value() == doctest::Approx(system.nvlink_latency.value() / 2));
        break;
      case LinkTier::kPcie:
        CHECK(l.bandwidth == gigabytes_per_second(64));  // PCIe Gen5 x16 carries the 400 Gb/s ConnectX-7
        CHECK(l.latency.value() == doctest::Approx(system.network_latency.value() / 2));
        break;
      case LinkTier::kNetwork:
        CHECK(l.bandwidth == gigabits_per_second(400));
        CHECK(l.latency == Seconds(0));
        break;
    }
  }
  // The host link is the first PCIe generation that carries the NIC: Gen4 for 200 Gb/s, Gen6 for 800 Gb/s.
  const auto pcie_of = [](const char* name) {
    const hw::Topology x = preset(name, 8);
    for (const auto& l : x.links()) {
      if (l.tier == LinkTier::kPcie) return l.bandwidth.value() / kGB;
    }
    return 0.0;
  };
  CHECK(pcie_of("dgx-a100") == 32);
  CHECK(pcie_of("dgx-b300") == 128);
}

TEST_CASE("route latencies sum to the preset's per-step latencies") {
  const auto system = config::load_system_preset("hgx-h100", 16);
  const hw::Topology t = hw::build_topology(system);
  CHECK(latency_of(t, t.route(0, 5)).value() == doctest::Approx(system.nvlink_latency.value()));
  CHECK(latency_of(t, t.route(0, 8)).value() == doctest::Approx(system.network_latency.value()));
  CHECK(latency_of(t, t.route(0, 13, {false})).value() == doctest::Approx(system.network_latency.value()));
  CHECK(latency_of(t, t.route(0, 13)).value() ==
        doctest::Approx(system.nvlink_latency.value() + system.network_latency.value()));
}

TEST_CASE("partial last node and rack") {
  SUBCASE("4 GPUs of one HGX node") {
    const hw::Topology t = preset("hgx-h100", 4);
    const auto s = hw::summarize(t);
    CHECK(s.gpus == 4);
    CHECK(s.nvswitches == 1);
    CHECK(s.nics == 4);
    CHECK(s.leaves == 4);  // rails 0-3 only
    CHECK(s.spines == 1);
    CHECK(s.nvlink_bisection.value() / kGB == doctest::Approx(2 * 450.0));
    // The rail halves {0,1} | {2,3} must cross the spine: 2 leaves × 1 uplink × 50.
    CHECK(s.network_bisection.value() / kGB == doctest::Approx(2 * 50.0));
    CHECK(tiers_on(t, t.route(0, 3)) == std::vector<LinkTier>{LinkTier::kNvlink, LinkTier::kNvlink});
  }
  SUBCASE("12 GPUs: one full node and half a node") {
    const hw::Topology t = preset("hgx-h100", 12);
    const auto s = hw::summarize(t);
    CHECK(s.nvswitches == 2);
    CHECK(s.leaves == 8);
    CHECK(s.spines == 2);  // the rail 0-3 leaves have 2 GPUs
    CHECK(s.nvlink_bisection.value() / kGB == doctest::Approx(4 * 450.0));  // the full node
    // Node 1 holds rails 0-3 only: PXN from gpu8 to gpu5 (rail 5) finds no proxy in its domain, so
    // the flow leaves through gpu8's own NIC and crosses a spine to the rail-5 leaf.
    const auto path = t.route(8, 5);
    check_chain(t, 8, 5, path);
    CHECK(count_kind(nodes_on(t, path), t, NodeKind::kSpineSwitch) == 1);
    CHECK(tiers_on(t, path).front() == LinkTier::kPcie);
  }
  SUBCASE("100 GPUs of NVL72: one full rack and 28 GPUs") {
    const hw::Topology t = preset("gb200-nvl72", 100);
    const auto s = hw::summarize(t);
    CHECK(s.gpus == 100);
    CHECK(s.nvswitches == 2);
    CHECK(s.domains == 2);
    CHECK(s.leaves == 4);
    CHECK(s.spines == 25);  // 25 trays on every rail
    CHECK(s.nvlink_bisection.value() / kGB == doctest::Approx(36 * 900.0));
    CHECK(s.network_bisection.value() / kGB == doctest::Approx(50 * 50.0));
    CHECK_NOTHROW(t.validate());
  }
}

TEST_CASE("every route is a connected chain: all pairs of a 2-node and a 2-rack system") {
  for (const auto& system : std::vector<std::pair<std::string, std::int64_t>>{{"hgx-h100", 16}, {"gb200-nvl72", 144}}) {
    const std::string& name = system.first;  // not a structured binding: clang 14 cannot capture those (CAPTURE)
    const std::int64_t gpus = system.second;
    CAPTURE(name);
    const hw::Topology t = preset(name, gpus);
    for (bool pxn : {true, false}) {
      CAPTURE(pxn);
      for (std::int32_t a = 0; a < t.num_gpus(); ++a) {
        for (std::int32_t b = 0; b < t.num_gpus(); ++b) {
          CAPTURE(a);
          CAPTURE(b);
          check_chain(t, a, b, t.route(a, b, {pxn}));
        }
      }
    }
  }
}

TEST_CASE("inside an NVLink domain a route is GPU → switch → GPU") {
  const hw::Topology t = preset("gb200-nvl72", 144);
  for (auto [a, b] : std::vector<std::pair<std::int32_t, std::int32_t>>{{0, 71}, {3, 4}, {80, 143}}) {
    const auto path = t.route(a, b);
    REQUIRE(path.size() == 2);
    CHECK(tiers_on(t, path) == std::vector<LinkTier>{LinkTier::kNvlink, LinkTier::kNvlink});
    CHECK(is_kind(t, link(t, path[0]).dst, NodeKind::kNvSwitch));
    CHECK(node(t, link(t, path[0]).dst).domain == a / 72);
  }
}

TEST_CASE("across domains on the same rail: NIC → leaf → NIC, via a spine only between pods") {
  const hw::Topology t = preset("hgx-h100", 16);
  const auto path = t.route(2, 10);  // rail 2 of node 0 and node 1: one leaf
  CHECK(tiers_on(t, path) ==
        std::vector<LinkTier>{LinkTier::kPcie, LinkTier::kNetwork, LinkTier::kNetwork, LinkTier::kPcie});
  const auto on = nodes_on(t, path);
  CHECK(node(t, on[1]).name == "nic2");
  CHECK(is_kind(t, on[2], NodeKind::kLeafSwitch));
  CHECK(node(t, on[2]).rail == 2);
  CHECK(node(t, on[3]).name == "nic10");
  // Leaf radix 1: every node is its own pod, so the same rail crosses a spine.
  const hw::Topology pods = preset("hgx-h100", 16, {1.0, 1});
  const auto far = pods.route(2, 10);
  check_chain(pods, 2, 10, far);
  const auto far_nodes = nodes_on(pods, far);
  CHECK(count_kind(far_nodes, pods, NodeKind::kSpineSwitch) == 1);
  CHECK(count_kind(far_nodes, pods, NodeKind::kLeafSwitch) == 2);
  const auto far_tiers = tiers_on(pods, far);
  CHECK(std::count(far_tiers.begin(), far_tiers.end(), LinkTier::kNvlink) == 0);
}

TEST_CASE("a rail mismatch takes the PXN hop on NVLink first; without PXN it crosses a spine") {
  SUBCASE("HGX") {
    const hw::Topology t = preset("hgx-h100", 16);
    const auto path = t.route(1, 14);  // rail 1 → rail 6
    check_chain(t, 1, 14, path);
    const auto on = nodes_on(t, path);
    REQUIRE(path.size() == 6);
    CHECK(tiers_on(t, path) == std::vector<LinkTier>{LinkTier::kNvlink, LinkTier::kNvlink, LinkTier::kPcie,
                                                     LinkTier::kNetwork, LinkTier::kNetwork, LinkTier::kPcie});
    CHECK(node(t, on[2]).name == "gpu6");  // the proxy: rail 6 of the source node
    CHECK(node(t, on[3]).name == "nic6");
    CHECK(count_kind(on, t, NodeKind::kSpineSwitch) == 0);
    const auto direct = t.route(1, 14, {false});
    const auto direct_nodes = nodes_on(t, direct);
    CHECK(node(t, direct_nodes[1]).name == "nic1");
    CHECK(count_kind(direct_nodes, t, NodeKind::kSpineSwitch) == 1);
    const auto direct_tiers = tiers_on(t, direct);
    CHECK(std::count(direct_tiers.begin(), direct_tiers.end(), LinkTier::kNvlink) == 0);
  }
  SUBCASE("NVL72: the proxy sits in the source's compute tray") {
    const hw::Topology t = preset("gb200-nvl72", 144);
    const auto path = t.route(9, 72 + 40);  // tray 2 rail 1 → rack 1, rail 0
    const auto on = nodes_on(t, path);
    REQUIRE(on.size() >= 3);
    CHECK(node(t, on[2]).name == "gpu8");  // rail 0 of tray 2
    CHECK(node(t, on[3]).name == "nic8");
    CHECK(node(t, on.back()).name == "gpu112");
  }
}

TEST_CASE("ECMP is deterministic and spreads pairs evenly over the spines") {
  const hw::Topology a = preset("hgx-h100", 64);
  const hw::Topology b = preset("hgx-h100", 64);
  std::map<std::string, int> per_spine;
  int crossing = 0;
  for (std::int32_t s = 0; s < 64; ++s) {
    for (std::int32_t d = 0; d < 64; ++d) {
      if (s / 8 == d / 8 || s % 8 == d % 8) continue;  // same node or same rail: no spine
      const auto path = a.route(s, d, {false});
      CHECK(path == a.route(s, d, {false}));
      CHECK(path == b.route(s, d, {false}));
      for (std::int32_t v : nodes_on(a, path)) {
        if (is_kind(a, v, NodeKind::kSpineSwitch)) ++per_spine[node(a, v).name];
      }
      ++crossing;
    }
  }
  REQUIRE(per_spine.size() == 8);
  const double mean = crossing / 8.0;
  for (const auto& entry : per_spine) {
    const auto& spine = entry.first;  // not a structured binding: clang 14 cannot capture those (CAPTURE)
    const auto n = entry.second;
    CAPTURE(spine);
    CHECK(n > 0.85 * mean);
    CHECK(n < 1.15 * mean);
  }
  // Rail-aligned traffic between pods (leaf radix 2: 4 pods) spreads the same way.
  const hw::Topology pods = preset("hgx-h100", 64, {1.0, 2});
  std::map<std::int32_t, int> uses;
  int total = 0;
  for (std::int32_t s = 0; s < 64; ++s) {
    for (std::int32_t d = 0; d < 64; ++d) {
      if (s / 16 == d / 16) continue;
      for (std::int32_t v : nodes_on(pods, pods.route(s, d))) {
        if (is_kind(pods, v, NodeKind::kSpineSwitch)) ++uses[v];
      }
      ++total;
    }
  }
  REQUIRE(uses.size() == 2);  // 2 GPUs per leaf → 2 spines
  for (const auto& [spine, n] : uses) CHECK(std::abs(n - total / 2.0) < 0.1 * total);
}

TEST_CASE("oversubscription and pods change the spine layer and the network bisection") {
  SUBCASE("oversubscription 2 halves the uplinks") {
    const hw::Topology t = preset("hgx-h100", 64, {2.0, 64});
    const auto s = hw::summarize(t);
    CHECK(s.spines == 4);
    CHECK(s.network_links == 128 + 8 * 4 * 2);
    double up = 0, down = 0;
    for (const auto& l : t.links()) {
      if (is_kind(t, l.src, NodeKind::kLeafSwitch) && is_kind(t, l.dst, NodeKind::kSpineSwitch)) up += l.bandwidth.value();
      if (is_kind(t, l.src, NodeKind::kLeafSwitch) && is_kind(t, l.dst, NodeKind::kNic)) down += l.bandwidth.value();
    }
    CHECK(up == doctest::Approx(down / 2));
    // (gpus / 2) × NIC / oversubscription = 32 × 50 / 2.
    CHECK(s.network_bisection.value() / kGB == doctest::Approx(800.0));
  }
  SUBCASE("leaf radix 4: two pods, 16 leaves, still non-blocking") {
    const hw::Topology t = preset("hgx-h100", 64, {1.0, 4});
    const auto s = hw::summarize(t);
    CHECK(s.leaves == 16);
    CHECK(s.spines == 4);
    CHECK(s.network_bisection.value() / kGB == doctest::Approx(1600.0));
  }
  SUBCASE("bad fabric options") {
    const auto system = config::load_system_preset("hgx-h100", 16);
    CHECK_THROWS_AS((void)hw::build_topology(system, {0.5, 64}), InputError);
    CHECK_THROWS_AS((void)hw::build_topology(system, {1.0, 0}), InputError);
    auto none = system;
    none.gpus = 0;
    CHECK_THROWS_AS((void)hw::build_topology(none), InputError);
  }
}

namespace {
/// Two GPUs on a switch, built by hand; the tests break it one way at a time.
hw::Topology pair_on_switch() {
  hw::Topology t;
  t.name = "pair";
  (void)t.add_node({0, NodeKind::kGpu, "g0", 0, 0, 0});
  (void)t.add_node({0, NodeKind::kGpu, "g1", 1, 0, 1});
  (void)t.add_node({0, NodeKind::kNvSwitch, "sw", -1, 0, -1});
  for (std::int32_t g : {0, 1}) {
    (void)t.add_link(g, 2, gigabytes_per_second(450), microseconds(1), LinkTier::kNvlink);
    (void)t.add_link(2, g, gigabytes_per_second(450), microseconds(1), LinkTier::kNvlink);
  }
  return t;
}
}  // namespace

TEST_CASE("validate() names the offending link or node") {
  CHECK(error_of(pair_on_switch()).empty());
  {
    auto t = pair_on_switch();
    (void)t.add_link(0, 7, gigabytes_per_second(1), Seconds(0), LinkTier::kNvlink);
    CHECK(error_of(t) == "at /links/4/dst: value 7: link endpoint is not a node; allowed: node ids 0 to 2");
  }
  {
    auto t = pair_on_switch();
    (void)t.add_link(0, 2, gigabytes_per_second(0), Seconds(0), LinkTier::kNvlink);
    CHECK(error_of(t) == "at /links/4/bandwidth_gbps: value 0: bandwidth must be > 0");
  }
  {
    auto t = pair_on_switch();
    (void)t.add_link(1, 1, gigabytes_per_second(1), Seconds(0), LinkTier::kNvlink);
    CHECK(error_of(t) == "at /links/4/dst: value \"g1\": a link must join two different nodes");
  }
  {
    auto t = pair_on_switch();
    (void)t.add_node({0, NodeKind::kGpu, "g2", 2, 1, 0});
    CHECK(error_of(t) == "at /nodes/3: value \"g2\": GPU cannot be reached from GPU \"g0\": the topology is disconnected");
    // A way in but none back is still disconnected.
    (void)t.add_link(2, 3, gigabytes_per_second(1), Seconds(0), LinkTier::kNvlink);
    CHECK(error_of(t) == "at /nodes/3: value \"g2\": GPU cannot reach GPU \"g0\": the topology is disconnected");
    (void)t.add_link(3, 2, gigabytes_per_second(1), Seconds(0), LinkTier::kNvlink);
    CHECK(error_of(t).empty());
  }
  {
    auto t = pair_on_switch();
    (void)t.add_node({0, NodeKind::kGpu, "g5", 5, 0, 0});
    CHECK(error_of(t) ==
          "at /nodes/3/gpu_index: value 5: GPU indices must run 0..gpus-1 (3 GPUs); allowed: integers from 0 to 2");
  }
  {
    auto t = pair_on_switch();
    (void)t.add_node({0, NodeKind::kGpu, "g0", 2, 0, 0});
    CHECK(error_of(t) == "at /nodes/3/id: value \"g0\": duplicate node id: already used by /nodes/0");
  }
  CHECK(error_of(hw::Topology{}) == "at /nodes: a topology needs at least one GPU");
}

TEST_CASE("hand-made topologies route by the same rules") {
  SUBCASE("four NVSwitch vertices: ECMP over them, two hops each") {
    hw::Topology t;
    for (std::int32_t g = 0; g < 8; ++g) (void)t.add_node({0, NodeKind::kGpu, "g" + std::to_string(g), g, 0, g});
    for (std::int32_t s = 0; s < 4; ++s) (void)t.add_node({0, NodeKind::kNvSwitch, "sw" + std::to_string(s), -1, 0, -1});
    for (std::int32_t g = 0; g < 8; ++g) {
      for (std::int32_t s = 8; s < 12; ++s) {
        (void)t.add_link(g, s, gigabytes_per_second(112.5), microseconds(1), LinkTier::kNvlink);
        (void)t.add_link(s, g, gigabytes_per_second(112.5), microseconds(1), LinkTier::kNvlink);
      }
    }
    REQUIRE(error_of(t).empty());
    std::set<std::int32_t> switches;
    for (std::int32_t a = 0; a < 8; ++a) {
      for (std::int32_t b = 0; b < 8; ++b) {
        const auto path = t.route(a, b);
        check_chain(t, a, b, path);
        if (a != b) {
          CHECK(path.size() == 2);
          switches.insert(link(t, path[0]).dst);
        }
      }
    }
    CHECK(switches.size() == 4);
    // The crossbar of 4 × 112.5 GB/s ports gives the same bisection as one 450 GB/s switch.
    CHECK(hw::summarize(t).nvlink_bisection.value() / kGB == doctest::Approx(4 * 450.0));
  }
  SUBCASE("a direct GPU-GPU link is one hop; GPUs without domains fall back to any path") {
    hw::Topology t;
    (void)t.add_node({0, NodeKind::kGpu, "a", 0, 0, -1});
    (void)t.add_node({0, NodeKind::kGpu, "b", 1, 0, -1});
    (void)t.add_node({0, NodeKind::kGpu, "c", 2, -1, -1});
    (void)t.add_link(0, 1, gigabytes_per_second(50), Seconds(0), LinkTier::kNvlink);
    (void)t.add_link(1, 0, gigabytes_per_second(50), Seconds(0), LinkTier::kNvlink);
    (void)t.add_link(1, 2, gigabytes_per_second(25), Seconds(0), LinkTier::kPcie);
    (void)t.add_link(2, 1, gigabytes_per_second(25), Seconds(0), LinkTier::kPcie);
    REQUIRE(error_of(t).empty());
    CHECK(t.route(0, 1).size() == 1);
    const auto path = t.route(0, 2);
    check_chain(t, 0, 2, path);
    CHECK(path.size() == 2);
  }
}

TEST_CASE("cables pair each link with its way back; Graphviz draws one edge per cable") {
  const hw::Topology t = preset("hgx-h100", 16);
  const auto all = hw::cables(t);
  CHECK(all.size() * 2 == t.links().size());
  for (const auto& c : all) {
    REQUIRE(c.reverse >= 0);
    CHECK(link(t, c.reverse).src == link(t, c.forward).dst);
    CHECK(link(t, c.reverse).dst == link(t, c.forward).src);
  }
  const std::string dot = hw::to_dot(t);
  std::size_t edges = 0;
  for (std::size_t pos = dot.find(" -> "); pos != std::string::npos; pos = dot.find(" -> ", pos + 1)) ++edges;
  CHECK(edges == all.size());
  CHECK(dot.find("subgraph \"cluster_domain1\"") != std::string::npos);
  CHECK(dot.rfind("digraph \"hgx-h100-16\" {", 0) == 0);
  auto one_way = pair_on_switch();
  (void)one_way.add_link(0, 1, gigabytes_per_second(1), Seconds(0), LinkTier::kPcie);
  const auto c = hw::cables(one_way);
  CHECK(c.size() == 3);
  CHECK(c.back().reverse == -1);
}

TEST_CASE("no Boost type leaks into a header") {
  namespace fs = std::filesystem;
  int headers = 0;
  for (const auto& e : fs::recursive_directory_iterator(test::source_dir() / "src")) {
    if (e.path().extension() != ".hpp") continue;
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    CAPTURE(e.path().string());
    CHECK(ss.str().find("boost/") == std::string::npos);
    ++headers;
  }
  CHECK(headers > 10);
}

TEST_CASE("route() may be called from several threads at once") {
  const hw::Topology serial = preset("hgx-h100", 64, {1.0, 2});
  std::vector<std::vector<std::int32_t>> expected;
  for (std::int32_t s = 0; s < 64; ++s) {
    for (std::int32_t d = 0; d < 64; ++d) expected.push_back(serial.route(s, d, {false}));
  }
  const hw::Topology shared = preset("hgx-h100", 64, {1.0, 2});  // cold routing cache
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (std::int32_t i = 0; i < 64 * 64; ++i) {
        const std::int32_t j = (i * 7 + k * 1013) % (64 * 64);  // each thread in its own order
        if (shared.route(j / 64, j % 64, {false}) != expected[static_cast<std::size_t>(j)]) ++mismatches[static_cast<std::size_t>(k)];
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}
