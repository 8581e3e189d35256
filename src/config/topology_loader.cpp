// Topology files: strict reader and writer. The reader checks what only the file can know (its ids
// are strings, its links are numbered as written) so that every message points at the JSON entry at
// fault; hw::Topology::validate() then checks the graph itself (every GPU reaches every other).
#include "config/topology_loader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "config/enum_field.hpp"
#include "config/hw_loader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/units.hpp"

namespace moesim::config {
namespace {

/// Graph sizes far above any real cluster (2^20 GPUs is the scenario limit), kept below int32.
constexpr IntRange kIndexRange{0, (1 << 20) - 1};
constexpr IntRange kDomainRange{0, 1 << 20};
constexpr NumberRange kBandwidthGbps{0.0, 1e7, true};  ///< up to 10 PB/s: no link comes near
constexpr NumberRange kLatencyUs{0.0, 1e7};           ///< up to 10 s


const Json& require_array(const ObjectReader& r, std::string_view key) {
  const Json* v = r.get(key);
  if (!v) throw InputError(r.path_of(key), "", "required field is missing");
  if (!v->is_array()) {
    throw InputError(r.path_of(key), describe_value(*v), "expected an array, got " + describe_type(*v));
  }
  return *v;
}

std::vector<hw::TopoNode> read_nodes(const ObjectReader& r, std::unordered_map<std::string, std::int32_t>& ids) {
  const Json& arr = require_array(r, "nodes");
  std::vector<hw::TopoNode> nodes;
  std::vector<std::size_t> gpu_entries;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const ObjectReader nr(arr[i], "/nodes/" + std::to_string(i), {"id", "kind", "gpu_index", "domain", "rail"});
    hw::TopoNode n;
    n.id = static_cast<std::int32_t>(i);
    n.name = nr.require_nonempty_string("id");
    n.kind = require_enum_value(nr, "kind", hw::kNodeKindNames);
    if (n.kind == hw::NodeKind::kGpu) {
      n.gpu_index = static_cast<std::int32_t>(nr.require_int("gpu_index", kIndexRange));
      // Routing keeps flows between GPUs of one domain on NVLink: a GPU must say where it belongs.
      n.domain = static_cast<std::int32_t>(nr.require_int("domain", kDomainRange));
      gpu_entries.push_back(i);
    } else {
      if (nr.has("gpu_index")) {
        throw InputError(nr.path_of("gpu_index"), describe_value(*nr.get("gpu_index")), "only GPU nodes have a gpu_index");
      }
      n.domain = static_cast<std::int32_t>(nr.get_int("domain", -1, kDomainRange));
    }
    n.rail = static_cast<std::int32_t>(nr.get_int("rail", -1, kDomainRange));
    if (auto [it, fresh] = ids.emplace(n.name, n.id); !fresh) {
      throw InputError(nr.path_of("id"), json_quoted(n.name), "duplicate node id: already used by /nodes/" + std::to_string(it->second));
    }
    nodes.push_back(std::move(n));
  }
  if (gpu_entries.empty()) throw InputError("/nodes", "", "a topology needs at least one GPU");
  // GPU indices are the ranks' GPU numbers: 0..N-1, each once.
  const auto gpus = static_cast<std::int64_t>(gpu_entries.size());
  std::vector<std::int64_t> owner(gpu_entries.size(), -1);
  for (std::size_t i : gpu_entries) {
    const std::int32_t idx = nodes[i].gpu_index;
    const std::string at = "/nodes/" + std::to_string(i) + "/gpu_index";
    if (idx >= gpus) {
      throw InputError(at, std::to_string(idx),
                       "gpu_index must run 0..N-1 without gaps (N = " + std::to_string(gpus) + " GPUs)",
                       "integers from 0 to " + std::to_string(gpus - 1));
    }
    if (owner[static_cast<std::size_t>(idx)] >= 0) {
      throw InputError(at, std::to_string(idx),
                       "duplicate gpu_index: already used by /nodes/" + std::to_string(owner[static_cast<std::size_t>(idx)]));
    }
    owner[static_cast<std::size_t>(idx)] = static_cast<std::int64_t>(i);
  }
  return nodes;
}

void read_links(const ObjectReader& r, const std::unordered_map<std::string, std::int32_t>& ids, hw::Topology& t) {
  const Json& arr = require_array(r, "links");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const ObjectReader lr(arr[i], "/links/" + std::to_string(i),
                          {"src", "dst", "bandwidth_gbps", "latency_us", "tier", "bidirectional"});
    const auto endpoint = [&](std::string_view key) {
      const std::string id = lr.require_string(key);
      const auto it = ids.find(id);
      if (it == ids.end()) throw InputError(lr.path_of(key), json_quoted(id), "unknown node id: no entry of /nodes has it");
      return it->second;
    };
    const std::int32_t src = endpoint("src");
    const std::int32_t dst = endpoint("dst");
    if (src == dst) throw InputError(lr.path_of("dst"), json_quoted(lr.require_string("dst")), "a link must join two different nodes");
    const BytesPerSecond bw = gigabytes_per_second(lr.require_number("bandwidth_gbps", kBandwidthGbps));
    const Seconds latency = microseconds(lr.require_number("latency_us", kLatencyUs));
    const hw::LinkTier tier = require_enum_value(lr, "tier", hw::kLinkTierNames);
    (void)t.add_link(src, dst, bw, latency, tier);
    if (lr.get_bool("bidirectional", true)) (void)t.add_link(dst, src, bw, latency, tier);
  }
}

/// Shortest text of `v` rounded to 10^-6: the files stay readable (1.7, not 1.7000000000000002) and
/// reading them back gives the value the builder computed to within 10^-6 of the unit.
std::string rounded(double v) {
  const double r = std::round(v * 1e6) / 1e6;
  return format_number(r == 0 ? 0.0 : r);
}

}  // namespace

hw::Topology parse_topology(const Json& obj, const std::string& file) {
  try {
    const ObjectReader r(obj, "", {"schema", "name", "description", "gpu", "nodes", "links"});
    const std::string schema = r.require_string("schema");
    if (schema != kTopologySchema) {
      throw InputError("/schema", json_quoted(schema), "unsupported topology schema", json_quoted(std::string(kTopologySchema)));
    }
    hw::Topology t;
    t.name = r.require_nonempty_string("name");
    t.description = r.get_string("description", "");
    t.gpu = r.require_string("gpu");
    (void)load_gpu_preset(t.gpu, r.path_of("gpu"));  // an unknown GPU fails here, listing the presets
    std::unordered_map<std::string, std::int32_t> ids;
    for (hw::TopoNode& n : read_nodes(r, ids)) (void)t.add_node(std::move(n));
    read_links(r, ids, t);
    t.validate();
    return t;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

hw::Topology load_topology_file(const std::string& path) { return parse_topology(load_json_file(path), path); }

std::string topology_to_json_text(const hw::Topology& t) {
  std::string out = "{\n";
  out += "  \"schema\": " + json_quoted(std::string(kTopologySchema)) + ",\n";
  out += "  \"name\": " + json_quoted(t.name) + ",\n";
  out += "  \"description\": " + json_quoted(t.description) + ",\n";
  out += "  \"gpu\": " + json_quoted(t.gpu) + ",\n";
  out += "  \"nodes\": [\n";
  const auto& nodes = t.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const hw::TopoNode& n = nodes[i];
    out += "    {\"id\": " + json_quoted(n.name) + ", \"kind\": \"" + std::string(hw::to_string(n.kind)) + "\"";
    if (n.kind == hw::NodeKind::kGpu) out += ", \"gpu_index\": " + std::to_string(n.gpu_index);
    if (n.domain >= 0) out += ", \"domain\": " + std::to_string(n.domain);
    if (n.rail >= 0) out += ", \"rail\": " + std::to_string(n.rail);
    out += i + 1 < nodes.size() ? "},\n" : "}\n";
  }
  out += "  ],\n  \"links\": [\n";
  const auto all = hw::cables(t);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const hw::TopoLink& l = t.links()[static_cast<std::size_t>(all[i].forward)];
    out += "    {\"src\": " + json_quoted(nodes[static_cast<std::size_t>(l.src)].name) +
           ", \"dst\": " + json_quoted(nodes[static_cast<std::size_t>(l.dst)].name) +
           ", \"bandwidth_gbps\": " + rounded(l.bandwidth.value() / kGB) +
           ", \"latency_us\": " + rounded(l.latency.value() * 1e6) + ", \"tier\": \"" + std::string(hw::to_string(l.tier)) +
           "\"";
    if (all[i].reverse < 0) out += ", \"bidirectional\": false";
    out += i + 1 < all.size() ? "},\n" : "}\n";
  }
  out += "  ]\n}\n";
  return out;
}

// ---- A topology file in a scenario: the SystemSpec the cost models read (docs/topology.md) ----
namespace {

/// Figures of the NCCL collective model when no preset has the file's GPU and domain size: the
/// values most presets share (topologies/systems/*.json cite them): NCCL tuning.cc hwLat Simple per
/// ring step, 370/450 NVLink busbw on H100 (nccl-tests #212), 47/50 GB/s per NDR NIC (nccl-tests #290).
constexpr double kDefaultNvlinkEfficiency = 0.822;
constexpr double kDefaultNetworkEfficiency = 0.94;
constexpr double kDefaultNvlinkLatencyUs = 3.4;
constexpr double kDefaultNetworkLatencyUs = 14.0;
/// NIC of a file whose GPUs have none (one NVLink domain: never used): 400 Gb/s, as most presets.
constexpr double kDefaultNicGbit = 400.0;

std::string node_path(const hw::TopoNode& n) { return "/nodes/" + std::to_string(n.id); }
std::string gbps_text(double bytes_per_s) { return format_number(bytes_per_s / kGB) + " GB/s"; }
/// Equal up to the 10^-6 GB/s rounding of written files, far below any real difference.
bool same_rate(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

std::vector<const hw::TopoNode*> gpus_in_rank_order(const hw::Topology& t) {
  std::vector<const hw::TopoNode*> out;
  for (std::int32_t i = 0; i < t.num_gpus(); ++i) out.push_back(&t.nodes()[static_cast<std::size_t>(t.gpu_node(i))]);
  return out;
}

/// GPUs per NVLink domain. The cost models place groups by one nvlink_domain_size, so every domain
/// must hold as many GPUs; the first GPU (in rank order) of a domain that differs is named.
std::int64_t domain_size(const std::vector<const hw::TopoNode*>& gpus) {
  std::map<std::int32_t, std::int64_t> count;
  for (const hw::TopoNode* g : gpus) ++count[g->domain];
  const std::int32_t first = gpus.front()->domain;
  const std::int64_t size = count[first];
  for (const hw::TopoNode* g : gpus) {
    if (count[g->domain] == size) continue;
    throw InputError(node_path(*g) + "/domain", std::to_string(g->domain),
                     "every NVLink domain must hold the same number of GPUs (a scenario takes one "
                     "nvlink_domain_size): domain " + std::to_string(g->domain) + " has " +
                         std::to_string(count[g->domain]) + " GPUs, domain " + std::to_string(first) +
                         " (of gpu_index 0) has " + std::to_string(size),
                     "domains of " + std::to_string(size) + " GPUs each");
  }
  return size;
}

/// The host's link and memory bandwidth per GPU: the matching preset's, else an HGX H100's x86 host
/// (PCIe Gen5, the interface of every x86 preset but the A100's).
void take_host_figures(const std::optional<hw::SystemSpec>& preset, hw::SystemSpec& s) {
  const hw::SystemSpec figures = preset ? *preset : load_system_preset("hgx-h100", 8);
  s.host_link_bandwidth = figures.host_link_bandwidth;
  s.host_memory_bandwidth = figures.host_memory_bandwidth;
  for (const char* key : {"host_link_gb_per_s", "host_memory_gb_per_s"}) {
    s.sources[key] = std::string(preset ? "[preset] " : "[default] no system preset has this GPU and NVLink domain: ") +
                     figures.name + ": " + figures.sources.at(key);
  }
}

/// The system preset with the file's GPU type and domain size: the source of the NCCL figures.
std::optional<hw::SystemSpec> matching_preset(const std::string& gpu, std::int64_t domain, std::int64_t gpus) {
  for (const std::string& name : system_preset_names()) {
    hw::SystemSpec s = load_system_preset(name, gpus);
    if (s.gpu.name == gpu && s.nvlink_domain_size == domain) return s;
  }
  return std::nullopt;
}

/// GPUs per host. A GPU's rail is its index inside its host, so a host holds one GPU of each rail:
/// the number of distinct rails. Without rails the file cannot tell hosts apart inside a domain.
void derive_gpus_per_node(const std::vector<const hw::TopoNode*>& gpus, const std::optional<hw::SystemSpec>& preset,
                          const std::string& file, hw::SystemSpec& s) {
  const std::int64_t domain = s.nvlink_domain_size;
  std::set<std::int32_t> rails;
  const hw::TopoNode* highest = nullptr;
  bool every_gpu_has_rail = true;
  for (const hw::TopoNode* g : gpus) {
    if (g->rail < 0) {
      every_gpu_has_rail = false;
      continue;
    }
    rails.insert(g->rail);
    if (!highest || g->rail > highest->rail) highest = g;
  }
  if (every_gpu_has_rail) {
    const auto count = static_cast<std::int64_t>(rails.size());
    if (domain % count != 0) {
      throw InputError(node_path(*highest) + "/rail", std::to_string(highest->rail),
                       "a host's GPUs share one NVLink domain, so the number of rails (a GPU's rail is its index "
                       "inside its host) must divide the GPUs per domain (" + std::to_string(domain) +
                           "); the GPUs use " + std::to_string(count) + " rails",
                       "rail counts that divide " + std::to_string(domain));
    }
    s.gpus_per_node = count;
    s.sources["gpus_per_node"] = "topology " + file + ": the GPUs use " + std::to_string(count) +
                                 " distinct rails, and a host holds one GPU per rail (a rail is a GPU's index inside its host)";
    return;
  }
  if (preset && domain % preset->gpus_per_node == 0) {
    s.gpus_per_node = preset->gpus_per_node;
    s.sources["gpus_per_node"] = "[preset] not every GPU of topology " + file + " has a rail; taken from preset " +
                                 preset->name + " (same GPU and NVLink domain size): " + preset->sources.at("gpus_per_node");
    return;
  }
  s.gpus_per_node = domain;
  s.sources["gpus_per_node"] = "[default] not every GPU of topology " + file +
                               " has a rail and no preset has its GPU and domain size: one host per NVLink domain";
}

/// The NICs one GPU sends through: the NIC nodes it has links to. Each is worth the smaller of the
/// GPU's links into it and the NIC's links out towards the fabric (a 64 GB/s PCIe link into a
/// 50 GB/s NIC carries 50 GB/s out), shared equally among the GPUs linked to it.
struct GpuNics {
  std::int64_t count = 0;
  double total_bytes_per_s = 0;
};

GpuNics nics_of(const hw::Topology& t, const hw::TopoNode& gpu) {
  const auto& nodes = t.nodes();
  const auto& links = t.links();
  std::map<std::int32_t, double> into;  // NIC node → bandwidth of this GPU's links into it
  for (std::int32_t l : t.out_links(gpu.id)) {
    const hw::TopoLink& link = links[static_cast<std::size_t>(l)];
    if (nodes[static_cast<std::size_t>(link.dst)].kind == hw::NodeKind::kNic) into[link.dst] += link.bandwidth.value();
  }
  GpuNics out;
  for (const auto& [nic, bandwidth] : into) {
    double uplink = 0;
    for (std::int32_t l : t.out_links(nic)) {
      const hw::TopoLink& link = links[static_cast<std::size_t>(l)];
      if (nodes[static_cast<std::size_t>(link.dst)].kind != hw::NodeKind::kGpu) uplink += link.bandwidth.value();
    }
    const hw::TopoNode& n = nodes[static_cast<std::size_t>(nic)];
    if (uplink <= 0) {
      throw InputError(node_path(n), json_quoted(n.name),
                       "a NIC a GPU sends through needs a link out towards the fabric (a switch or another NIC); "
                       "this one only leads back to GPUs");
    }
    std::set<std::int32_t> sharers;
    for (std::int32_t l : t.in_links(nic)) {
      const hw::TopoLink& link = links[static_cast<std::size_t>(l)];
      if (nodes[static_cast<std::size_t>(link.src)].kind == hw::NodeKind::kGpu) sharers.insert(link.src);
    }
    ++out.count;
    out.total_bytes_per_s += std::min(bandwidth, uplink) / static_cast<double>(sharers.size());
  }
  return out;
}

std::string nics_text(const GpuNics& n) {
  return std::to_string(n.count) + " NIC(s) carrying " + gbps_text(n.total_bytes_per_s) + " in all";
}

/// nics_per_gpu and nic_bandwidth: one figure per system, so every GPU must have the same NICs.
void derive_nics(const hw::Topology& t, const std::vector<const hw::TopoNode*>& gpus,
                 const std::optional<hw::SystemSpec>& preset, const std::string& file, hw::SystemSpec& s) {
  const GpuNics first = nics_of(t, *gpus.front());
  for (const hw::TopoNode* g : gpus) {
    const GpuNics n = nics_of(t, *g);
    if (n.count == first.count && same_rate(n.total_bytes_per_s, first.total_bytes_per_s)) continue;
    throw InputError(node_path(*g), json_quoted(g->name),
                     "every GPU needs the same NICs (nics_per_gpu and nic_bandwidth are one figure per system): "
                     "gpu_index 0 has " + nics_text(first) + ", gpu_index " + std::to_string(g->gpu_index) +
                         " has " + nics_text(n));
  }
  if (first.count > 0) {
    s.nics_per_gpu = first.count;
    s.nic_bandwidth = BytesPerSecond(first.total_bytes_per_s / static_cast<double>(first.count));
    const std::string how = "topology " + file + ": every GPU links to " + std::to_string(first.count) +
                            " NIC(s); each NIC counts the smaller of the GPU's link into it and its links out "
                            "towards the fabric, shared among the GPUs linked to it";
    s.sources["nics_per_gpu"] = how;
    s.sources["nic_bandwidth_gbit"] = how + ": " + gbps_text(first.total_bytes_per_s) + " per GPU";
    return;
  }
  if (s.num_nvlink_domains() > 1) {
    throw InputError(node_path(*gpus.front()), json_quoted(gpus.front()->name),
                     "GPUs of different NVLink domains talk through NICs, and this GPU has no link to a NIC");
  }
  // One domain: the scale-out figures are never used, but stay finite and traceable.
  s.nics_per_gpu = 1;
  s.nic_bandwidth = preset ? preset->nic_bandwidth : gigabits_per_second(kDefaultNicGbit);
  const std::string why = "[unused] the GPUs of topology " + file + " have no NIC and form one NVLink domain; ";
  s.sources["nics_per_gpu"] = why + "one NIC per GPU";
  s.sources["nic_bandwidth_gbit"] =
      why + (preset ? "taken from preset " + preset->name : "400 Gb/s, the NIC of most presets");
}

/// NVLS, efficiencies and per-step latencies describe NCCL on the hardware, not the wiring: they
/// come from the preset with the same GPU and domain size, else from documented defaults.
void take_nccl_figures(const std::optional<hw::SystemSpec>& preset, const std::string& file, DerivedSystem& out) {
  hw::SystemSpec& s = out.system;
  const std::vector<std::string> keys = {"nvls", "nvlink_efficiency", "network_efficiency", "nvlink_latency_us",
                                         "network_latency_us"};
  if (preset) {
    s.nvls = preset->nvls;
    s.nvlink_efficiency = preset->nvlink_efficiency;
    s.network_efficiency = preset->network_efficiency;
    s.nvlink_latency = preset->nvlink_latency;
    s.network_latency = preset->network_latency;
    out.matched_preset = preset->name;
    for (const auto& key : keys) {
      s.sources[key] = "[preset] " + preset->name + ", the preset with GPU " + preset->gpu.name +
                       " and NVLink domains of " + std::to_string(s.nvlink_domain_size) + ": " + preset->sources.at(key);
    }
    return;
  }
  s.nvls = false;  // unknown switch generation: no in-switch reduction rather than an optimistic one
  s.nvlink_efficiency = kDefaultNvlinkEfficiency;
  s.network_efficiency = kDefaultNetworkEfficiency;
  s.nvlink_latency = microseconds(kDefaultNvlinkLatencyUs);
  s.network_latency = microseconds(kDefaultNetworkLatencyUs);
  const std::string why = "[default] no system preset has GPU " + s.gpu.name + " with NVLink domains of " +
                          std::to_string(s.nvlink_domain_size) + " GPUs (docs/topology.md)";
  for (const auto& key : keys) s.sources[key] = why;
  out.warnings.push_back("topology " + file + ": no system preset has GPU " + s.gpu.name + " with NVLink domains of " +
                         std::to_string(s.nvlink_domain_size) +
                         " GPUs; NCCL figures are defaults: NVLink efficiency 0.822, network efficiency 0.94, "
                         "latencies 3.4 us (NVLink) and 14 us (network) per step, NVLS off");
}

/// The cost models take a GPU's NVLink bandwidth from its preset; a file that wires GPUs at another
/// rate is told so rather than silently overruled.
void check_nvlink_rate(const hw::Topology& t, const std::vector<const hw::TopoNode*>& gpus, const std::string& file,
                       DerivedSystem& out) {
  if (out.system.nvlink_domain_size < 2) return;
  const double preset_rate = out.system.gpu.nvlink_bandwidth.value();
  for (const hw::TopoNode* g : gpus) {
    double rate = 0;
    for (std::int32_t l : t.out_links(g->id)) {
      const hw::TopoLink& link = t.links()[static_cast<std::size_t>(l)];
      if (link.tier == hw::LinkTier::kNvlink) rate += link.bandwidth.value();
    }
    if (std::abs(rate - preset_rate) <= 1e-6 * preset_rate) continue;
    out.warnings.push_back("topology " + file + ": " + g->name + " has " + gbps_text(rate) +
                           " of NVLink links out, GPU preset " + out.system.gpu.name + " has " + gbps_text(preset_rate) +
                           " per GPU; the estimate uses the preset's figure");
    return;
  }
}

}  // namespace

DerivedSystem derive_system_spec(const hw::Topology& t, const std::string& file, const std::optional<hw::GpuSpec>& gpu) {
  try {
    DerivedSystem out;
    hw::SystemSpec& s = out.system;
    const auto gpus = gpus_in_rank_order(t);
    if (gpus.empty()) throw InputError("/nodes", "", "a topology needs at least one GPU");
    s.name = t.name;
    s.description = t.description;
    s.gpu = gpu ? *gpu : load_gpu_preset(t.gpu, "/gpu");
    s.gpus = static_cast<std::int64_t>(gpus.size());
    s.sources["gpus"] = "topology " + file + ": " + std::to_string(s.gpus) + " GPU nodes";
    s.nvlink_domain_size = domain_size(gpus);
    s.sources["nvlink_domain_size"] =
        "topology " + file + ": every NVLink domain (the GPUs' \"domain\") holds " + std::to_string(s.nvlink_domain_size) + " GPUs";
    // Matched on the file's GPU, as a preset keeps its cluster figures under a system.gpu override.
    const auto preset = matching_preset(t.gpu, s.nvlink_domain_size, s.gpus);
    derive_gpus_per_node(gpus, preset, file, s);
    derive_nics(t, gpus, preset, file, s);
    take_nccl_figures(preset, file, out);
    // The host is not wiring either: the matching preset's, else x86 (every preset but the Grace racks).
    s.host = preset ? preset->host : hw::HostKind::kX86;
    s.sources["host"] = preset ? "[preset] " + preset->name + ": " + preset->sources.at("host")
                               : "[default] no system preset has GPU " + s.gpu.name +
                                     " with these NVLink domains: an x86 host, as on every HGX/DGX system";
    take_host_figures(preset, s);
    check_nvlink_rate(t, gpus, file, out);
    return out;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

}  // namespace moesim::config
