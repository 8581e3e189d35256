#pragma once
// The cluster as a graph: vertices are GPUs, NVSwitches (or NVLink switch trays), NICs and
// leaf/spine switches; edges are directed links with a bandwidth and a latency. Boost.Graph is the
// storage and stays inside hw/ (pimpl): callers see ids and link lists only.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/named_enum.hpp"
#include "core/units.hpp"
#include "hw/system_spec.hpp"

namespace moesim::hw {

enum class NodeKind { kGpu, kNvSwitch, kNic, kLeafSwitch, kSpineSwitch };
enum class LinkTier { kNvlink, kPcie, kNetwork };
/// The topology file's spelling (docs/topology.md).
inline constexpr auto kNodeKindNames = std::to_array<EnumName<NodeKind>>(
    {{NodeKind::kGpu, "gpu"}, {NodeKind::kNvSwitch, "nvswitch"}, {NodeKind::kNic, "nic"},
     {NodeKind::kLeafSwitch, "leaf"}, {NodeKind::kSpineSwitch, "spine"}});
inline constexpr auto kLinkTierNames = std::to_array<EnumName<LinkTier>>(
    {{LinkTier::kNvlink, "nvlink"}, {LinkTier::kPcie, "pcie"}, {LinkTier::kNetwork, "network"}});
[[nodiscard]] std::string_view to_string(NodeKind k);
[[nodiscard]] std::string_view to_string(LinkTier t);

struct TopoNode {
  std::int32_t id = 0;
  NodeKind kind = NodeKind::kGpu;
  std::string name;           ///< unique, e.g. "gpu12", "node1/nvswitch0", "leaf3", "spine0"
  std::int32_t gpu_index = -1;    ///< 0..gpus-1 for GPUs (global rank order), else -1
  std::int32_t domain = -1;       ///< NVLink domain of a GPU / NVSwitch / NIC
  std::int32_t rail = -1;         ///< rail (local GPU index) of a GPU, its NIC and its leaf
};

struct TopoLink {
  std::int32_t id = 0;
  std::int32_t src = 0, dst = 0;  ///< node ids; the link carries bytes from src to dst
  BytesPerSecond bandwidth;       ///< one direction
  Seconds latency;
  LinkTier tier = LinkTier::kNvlink;
};

/// How flows are routed between GPUs.
struct RoutingOptions {
  bool pxn = true;  ///< NCCL PXN: cross-rail traffic first moves over NVLink to the GPU on the destination's rail
};

class Topology {
 public:
  Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;
  ~Topology();

  std::int32_t add_node(TopoNode node);  ///< returns the id (its index)
  /// Adds a directed link; bidirectional links are two calls.
  std::int32_t add_link(std::int32_t src, std::int32_t dst, BytesPerSecond bw, Seconds latency, LinkTier tier);

  [[nodiscard]] const std::vector<TopoNode>& nodes() const;
  [[nodiscard]] const std::vector<TopoLink>& links() const;
  [[nodiscard]] std::int32_t num_gpus() const;
  /// Node id of GPU `gpu_index`.
  [[nodiscard]] std::int32_t gpu_node(std::int32_t gpu_index) const;
  /// Links leaving / entering a node.
  [[nodiscard]] const std::vector<std::int32_t>& out_links(std::int32_t node) const;
  [[nodiscard]] const std::vector<std::int32_t>& in_links(std::int32_t node) const;

  /// Link ids of the path from GPU `src` to GPU `dst` (empty when src == dst): NVLink inside a
  /// domain; across domains NIC → leaf (→ spine → leaf) → NIC on the same rail, spine chosen by a
  /// deterministic hash of (src, dst) (ECMP); with PXN a rail mismatch is crossed on NVLink first.
  /// Safe to call from several threads at once (routing tables are cached under a lock), but not
  /// while another thread adds nodes or links.
  [[nodiscard]] std::vector<std::int32_t> route(std::int32_t src, std::int32_t dst, const RoutingOptions& opt = {}) const;

  /// Structural checks (every link's endpoints exist, bandwidth > 0, every GPU reaches every other
  /// GPU); throws InputError naming the offending node or link.
  void validate() const;

  std::string name;
  std::string description;
  std::string gpu;  ///< GPU preset name of the GPUs (their peaks); empty when unknown

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Options of the scale-out fabric of a preset.
struct FabricOptions {
  double oversubscription = 1.0;   ///< leaf down / up bandwidth ratio (1 = non-blocking)
  std::int32_t leaf_radix = 64;    ///< GPU-facing ports per leaf (rail-optimized: one leaf per rail per pod)
};

/// The topology of a cluster preset sized by system.gpus: HGX/DGX nodes (8 GPUs on NVSwitch, one NIC
/// per GPU) on a rail-optimized leaf–spine fat tree, or NVL72 racks (72 GPUs in one NVLink domain, 18
/// compute trays of 4) with scale-out NICs between racks.
[[nodiscard]] Topology build_topology(const SystemSpec& system, const FabricOptions& fabric = {});

/// Summary numbers `moesim topo show` prints.
struct TopologySummary {
  std::int32_t gpus = 0, nvswitches = 0, nics = 0, leaves = 0, spines = 0;
  std::int32_t domains = 0;  ///< distinct NVLink domains of the GPUs
  std::int64_t nvlink_links = 0, network_links = 0, pcie_links = 0;
  BytesPerSecond nvlink_bisection;   ///< per NVLink domain: min cut between its two GPU halves
  BytesPerSecond network_bisection;  ///< whole fabric: half the GPUs to the other half
};
[[nodiscard]] TopologySummary summarize(const Topology& t);

/// A link and its way back: `reverse` is the id of the link that runs dst → src with the same
/// bandwidth, latency and tier (-1 when there is none). The writers print one cable per entry.
struct Cable {
  std::int32_t forward = 0;
  std::int32_t reverse = -1;
};
/// Every link exactly once, in id order of `forward`; each link pairs with the first unpaired
/// reverse link after it.
[[nodiscard]] std::vector<Cable> cables(const Topology& t);

/// Graphviz text of the topology (`moesim topo export --dot`).
[[nodiscard]] std::string to_dot(const Topology& t);

}  // namespace moesim::hw
