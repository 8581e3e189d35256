// The report's topology graph (hw::tier_graph): NVLink domains folded into one node each, switches
// kept, network cables counted per pair.
#include <doctest/doctest.h>

#include <numeric>

#include "config/hw_loader.hpp"
#include "hw/tier_graph.hpp"

using namespace moesim;

TEST_CASE("tier graph of 64 HGX H100: 8 domains of 8 GPUs, every NIC cable to its rail's leaf") {
  const hw::Topology t = hw::build_topology(config::load_system_preset("hgx-h100", 64));
  const hw::TierGraph g = hw::tier_graph(t);
  int domains = 0, leaves = 0, spines = 0, gpus = 0;
  for (const auto& n : g.nodes) {
    if (n.kind == "nvlink_domain") {
      ++domains;
      gpus += n.gpus;
      CHECK(n.gpus == 8);
    }
    leaves += n.kind == "leaf" ? 1 : 0;
    spines += n.kind == "spine" ? 1 : 0;
  }
  CHECK(domains == 8);
  CHECK(gpus == 64);
  CHECK(leaves == 8);   // one leaf per rail (moesim topo show: "8 leaf, 8 spine")
  CHECK(spines == 8);
  int nic_cables = 0;
  for (const auto& e : g.edges) {
    CHECK(e.a < e.b);
    const bool domain_edge = g.nodes[static_cast<std::size_t>(e.a)].kind == "nvlink_domain" ||
                             g.nodes[static_cast<std::size_t>(e.b)].kind == "nvlink_domain";
    if (domain_edge) {
      nic_cables += e.cables;
      CHECK(e.bandwidth_bytes_per_s == doctest::Approx(e.cables * 50e9).epsilon(1e-9).scale(0));  // 400 Gb/s NICs
    }
  }
  CHECK(nic_cables == 64);  // one NIC per GPU
}

TEST_CASE("an NVL72 rack is one domain with no switch tiers") {
  const hw::TierGraph g = hw::tier_graph(hw::build_topology(config::load_system_preset("gb200-nvl72", 72)));
  int domains = 0;
  for (const auto& n : g.nodes) domains += n.kind == "nvlink_domain" ? 1 : 0;
  CHECK(domains == 1);
  CHECK(g.nodes.front().gpus == 72);
}
