// Topologies of the cluster presets, sized by system.gpus. One builder serves HGX/DGX nodes and NVL72
// racks alike: they differ only in the preset's numbers (gpus_per_node 8 vs 4, nvlink_domain_size
// 8 vs 72). docs/topology.md explains the modelling choices; the comments here say why each holds.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/format.hpp"
#include "hw/topology.hpp"

namespace moesim::hw {
namespace {

/// PCIe x16 rates one way, from the PCI-SIG base specifications' per-lane signalling rates
/// (4.0: 16 GT/s, 5.0: 32 GT/s, 6.0: 64 GT/s; × 16 lanes / 8 bits), encoding overhead (1.5% for
/// 128b/130b) left out because this hop never binds: NVIDIA gives each NIC a host link that carries
/// its line rate (ConnectX-6 HDR 200G on Gen4 x16, ConnectX-7 400G on Gen5 x16 — the "≈ 64 GB/s" of
/// an HGX H100 NIC —, ConnectX-8 800G on Gen6 x16).
constexpr double kPcieX16Gbps[] = {32.0, 64.0, 128.0};

/// The slowest PCIe generation whose x16 link carries the NIC's line rate; a NIC faster than
/// Gen6 x16 is given a host link at its own rate.
BytesPerSecond host_link_bandwidth(BytesPerSecond nic) {
  for (double gbps : kPcieX16Gbps) {
    if (gigabytes_per_second(gbps) >= nic) return gigabytes_per_second(gbps);
  }
  return nic;
}

[[noreturn]] void bad_system(const std::string& field, const std::string& value, const std::string& rule,
                             const std::string& allowed = {}) {
  throw InputError("/system/" + field, value, rule, allowed);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

Topology build_topology(const SystemSpec& system, const FabricOptions& fabric) {
  // 2^20 GPUs: the scenario limit (scenario/scenario_fields.hpp); beyond it the graph would not fit.
  constexpr std::int64_t kMaxGpus = 1 << 20;
  const std::int64_t n = system.gpus;
  const std::int64_t per_node = system.gpus_per_node;
  const std::int64_t per_domain = system.nvlink_domain_size;
  if (n < 1 || n > kMaxGpus) bad_system("gpus", std::to_string(n), "out of range", "integers from 1 to 1048576");
  if (per_node < 1) bad_system("gpus_per_node", std::to_string(per_node), "out of range", "integers >= 1");
  if (per_domain < 1 || per_domain % per_node != 0) {
    bad_system("nvlink_domain_size", std::to_string(per_domain),
               "an NVLink domain spans whole nodes: must be a positive multiple of gpus_per_node (" +
                   std::to_string(per_node) + ")");
  }
  if (!(fabric.oversubscription >= 1.0) || !std::isfinite(fabric.oversubscription)) {
    throw InputError("/fabric/oversubscription", format_number(fabric.oversubscription), "out of range", "numbers >= 1");
  }
  if (fabric.leaf_radix < 1) {
    throw InputError("/fabric/leaf_radix", std::to_string(fabric.leaf_radix), "out of range", "integers >= 1");
  }
  if (!(system.gpu.nvlink_bandwidth > BytesPerSecond(0)) && per_domain > 1) {
    bad_system("gpu", "\"" + system.gpu.name + "\"", "an NVLink domain needs the GPU's NVLink bandwidth (> 0)");
  }
  if (!(system.nic_bandwidth > BytesPerSecond(0))) {
    bad_system("nic_bandwidth_gbit", format_number(system.nic_bandwidth.value() * 8 / 1e9), "must be > 0");
  }

  const std::int64_t hosts = ceil_div(n, per_node);
  const std::int64_t domains = ceil_div(n, per_domain);
  const std::int64_t pods = ceil_div(hosts, fabric.leaf_radix);
  const auto domain_of = [&](std::int64_t g) { return static_cast<std::int32_t>(g / per_domain); };
  const auto rail_of = [&](std::int64_t g) { return static_cast<std::int32_t>(g % per_node); };
  const auto pod_of = [&](std::int64_t g) { return g / per_node / fabric.leaf_radix; };
  // NVL72 racks hold several hosts (compute trays) in one domain; an HGX node is host and domain.
  const char* domain_word = per_domain > per_node ? "rack" : "node";

  Topology t;
  t.name = system.name + "-" + std::to_string(n);
  t.gpu = system.gpu.name;

  std::vector<std::int32_t> gpu(static_cast<std::size_t>(n)), nic(static_cast<std::size_t>(n));
  for (std::int64_t g = 0; g < n; ++g) {
    gpu[static_cast<std::size_t>(g)] = t.add_node(
        {0, NodeKind::kGpu, "gpu" + std::to_string(g), static_cast<std::int32_t>(g), domain_of(g), rail_of(g)});
  }
  // One switch vertex per NVLink domain. The 4 NVSwitch chips of an HGX baseboard (or the 9 switch
  // trays × 2 ASICs of an NVL72 rack) are one crossbar with the GPU's full NVLink bandwidth on each
  // port: every GPU spreads its 18 links over all the chips, so any GPU pair gets the whole per-GPU
  // bandwidth and NCCL sees a full-bandwidth crossbar (ecosystem.md section 7: "full all-to-all at
  // full per-GPU bandwidth"). Per-chip vertices would only split every flow evenly over them.
  std::vector<std::int32_t> nvswitch;
  if (per_domain > 1) {
    for (std::int64_t d = 0; d < domains; ++d) {
      nvswitch.push_back(t.add_node({0, NodeKind::kNvSwitch, fmt::format("{}{}/nvswitch0", domain_word, d), -1,
                                     static_cast<std::int32_t>(d), -1}));
    }
  }
  // One NIC vertex per GPU carrying all its NICs (every preset has one; more would be bonded here).
  for (std::int64_t g = 0; g < n; ++g) {
    nic[static_cast<std::size_t>(g)] =
        t.add_node({0, NodeKind::kNic, "nic" + std::to_string(g), -1, domain_of(g), rail_of(g)});
  }
  // Rail-optimized: NIC r of every host goes to the leaf of rail r of its pod (leaf_radix hosts per
  // pod). A rail exists in a pod when the pod's first host has that GPU (a partial last host lacks
  // the high rails).
  std::vector<std::vector<std::int32_t>> leaf(static_cast<std::size_t>(pods),
                                              std::vector<std::int32_t>(static_cast<std::size_t>(per_node), -1));
  std::vector<std::vector<std::size_t>> leaf_slot(leaf.size(), std::vector<std::size_t>(static_cast<std::size_t>(per_node)));
  std::vector<std::int64_t> leaf_ports;  // GPU-facing ports in use, by leaf creation order
  std::vector<std::int32_t> leaves;
  for (std::int64_t p = 0; p < pods; ++p) {
    for (std::int64_t r = 0; r < per_node; ++r) {
      if (p * fabric.leaf_radix * per_node + r >= n) continue;
      const std::int32_t id =
          t.add_node({0, NodeKind::kLeafSwitch, "leaf" + std::to_string(leaves.size()), -1, -1, static_cast<std::int32_t>(r)});
      leaf[static_cast<std::size_t>(p)][static_cast<std::size_t>(r)] = id;
      leaf_slot[static_cast<std::size_t>(p)][static_cast<std::size_t>(r)] = leaves.size();
      leaves.push_back(id);
      leaf_ports.push_back(0);
    }
  }
  for (std::int64_t g = 0; g < n; ++g) {
    ++leaf_ports[leaf_slot[static_cast<std::size_t>(pod_of(g))][static_cast<std::size_t>(rail_of(g))]];
  }
  // Spines: as many as the busiest leaf has uplinks at the NIC's port speed (its downlinks divided by
  // the oversubscription), each leaf joined to every spine, so a leaf's total uplink is exactly its
  // downlink / oversubscription. One leaf needs none: all its GPUs meet there.
  const BytesPerSecond port = system.network_bandwidth_per_gpu();
  const std::int64_t busiest = leaf_ports.empty() ? 0 : *std::max_element(leaf_ports.begin(), leaf_ports.end());
  const std::int64_t spines =
      leaves.size() > 1 ? std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(static_cast<double>(busiest) / fabric.oversubscription - 1e-9))) : 0;
  std::vector<std::int32_t> spine;
  for (std::int64_t s = 0; s < spines; ++s) {
    spine.push_back(t.add_node({0, NodeKind::kSpineSwitch, "spine" + std::to_string(s), -1, -1, -1}));
  }

  // Latency split. The presets' latencies are NCCL's per-step figures (tuning.cc hwLat), end to end:
  // a GPU → switch → GPU step costs nvlink_latency, so each NVLink hop carries half of it; an
  // inter-domain step costs network_latency, carried by the two host hops (GPU ↔ NIC: proxy, PCIe and
  // NIC processing) at half each, switch hops at zero. So every GPU → NIC → … → NIC → GPU path sums
  // to exactly network_latency whatever its hop count: NCCL's figure does not split by hop and a
  // switch traversal (a few hundred ns) is within its rounding.
  const Seconds nvlink_hop = system.nvlink_latency * 0.5;
  const Seconds host_hop = system.network_latency * 0.5;
  const auto both_ways = [&t](std::int32_t a, std::int32_t b, BytesPerSecond bw, Seconds lat, LinkTier tier) {
    (void)t.add_link(a, b, bw, lat, tier);
    (void)t.add_link(b, a, bw, lat, tier);
  };
  if (!nvswitch.empty()) {
    for (std::int64_t g = 0; g < n; ++g) {
      both_ways(gpu[static_cast<std::size_t>(g)], nvswitch[static_cast<std::size_t>(domain_of(g))],
                system.gpu.nvlink_bandwidth, nvlink_hop, LinkTier::kNvlink);
    }
  }
  const BytesPerSecond pcie = host_link_bandwidth(port);
  for (std::int64_t g = 0; g < n; ++g) {
    both_ways(gpu[static_cast<std::size_t>(g)], nic[static_cast<std::size_t>(g)], pcie, host_hop, LinkTier::kPcie);
  }
  for (std::int64_t g = 0; g < n; ++g) {
    both_ways(nic[static_cast<std::size_t>(g)],
              leaf[static_cast<std::size_t>(pod_of(g))][static_cast<std::size_t>(rail_of(g))], port, Seconds(0),
              LinkTier::kNetwork);
  }
  for (std::size_t l = 0; l < leaves.size() && spines > 0; ++l) {
    const BytesPerSecond uplink =
        port * (static_cast<double>(leaf_ports[l]) / (fabric.oversubscription * static_cast<double>(spines)));
    for (std::int32_t s : spine) both_ways(leaves[l], s, uplink, Seconds(0), LinkTier::kNetwork);
  }

  t.description = fmt::format(
      "{} sized to {} GPUs: {} NVLink domain{} (one per {}) of up to {} GPUs ({} GB/s per GPU each way{}), {} Gb/s of NICs per GPU on a "
      "rail-optimized fabric of {} leaf and {} spine switches (leaf radix {}, oversubscription {})",
      system.name, n, domains, domains == 1 ? "" : "s", domain_word, per_domain,
      format_number(system.gpu.nvlink_bandwidth.value() / kGB), per_domain > 1 ? " through one switch crossbar" : "",
      format_number(port.value() * 8 / 1e9), leaves.size(), spines, fabric.leaf_radix,
      format_number(fabric.oversubscription));
  return t;
}

}  // namespace moesim::hw
