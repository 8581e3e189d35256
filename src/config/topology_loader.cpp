// Topology files: strict reader and writer. The reader checks what only the file can know (its ids
// are strings, its links are numbered as written) so that every message points at the JSON entry at
// fault; hw::Topology::validate() then checks the graph itself (every GPU reaches every other).
#include "config/topology_loader.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "config/hw_loader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/units.hpp"

namespace moesim::config {
namespace {

const std::vector<std::string> kKinds = {"gpu", "nvswitch", "nic", "leaf", "spine"};
const std::vector<std::string> kTiers = {"nvlink", "pcie", "network"};
/// Graph sizes far above any real cluster (2^20 GPUs is the scenario limit), kept below int32.
constexpr IntRange kIndexRange{0, (1 << 20) - 1};
constexpr IntRange kDomainRange{0, 1 << 20};
constexpr NumberRange kBandwidthGbps{0.0, 1e7, true};  ///< up to 10 PB/s: no link comes near
constexpr NumberRange kLatencyUs{0.0, 1e7};           ///< up to 10 s

std::string json_string(const std::string& s) { return Json(s).dump(); }

std::string require_enum(const ObjectReader& r, std::string_view key, const std::vector<std::string>& allowed) {
  if (!r.has(key)) throw InputError(r.path_of(key), "", "required field is missing", join(allowed));
  return r.get_enum(key, "", allowed);
}

std::string require_nonempty(const ObjectReader& r, std::string_view key) {
  std::string s = r.require_string(key);
  if (s.empty()) throw InputError(r.path_of(key), "\"\"", "must not be empty");
  return s;
}

const Json& require_array(const ObjectReader& r, std::string_view key) {
  const Json* v = r.get(key);
  if (!v) throw InputError(r.path_of(key), "", "required field is missing");
  if (!v->is_array()) {
    throw InputError(r.path_of(key), describe_value(*v), "expected an array, got " + describe_type(*v));
  }
  return *v;
}

hw::NodeKind kind_of(const std::string& s) {
  if (s == "gpu") return hw::NodeKind::kGpu;
  if (s == "nvswitch") return hw::NodeKind::kNvSwitch;
  if (s == "nic") return hw::NodeKind::kNic;
  if (s == "leaf") return hw::NodeKind::kLeafSwitch;
  return hw::NodeKind::kSpineSwitch;
}

hw::LinkTier tier_of(const std::string& s) {
  if (s == "nvlink") return hw::LinkTier::kNvlink;
  if (s == "pcie") return hw::LinkTier::kPcie;
  return hw::LinkTier::kNetwork;
}

std::vector<hw::TopoNode> read_nodes(const ObjectReader& r, std::unordered_map<std::string, std::int32_t>& ids) {
  const Json& arr = require_array(r, "nodes");
  std::vector<hw::TopoNode> nodes;
  std::vector<std::size_t> gpu_entries;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const ObjectReader nr(arr[i], "/nodes/" + std::to_string(i), {"id", "kind", "gpu_index", "domain", "rail"});
    hw::TopoNode n;
    n.id = static_cast<std::int32_t>(i);
    n.name = require_nonempty(nr, "id");
    n.kind = kind_of(require_enum(nr, "kind", kKinds));
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
      throw InputError(nr.path_of("id"), json_string(n.name), "duplicate node id: already used by /nodes/" + std::to_string(it->second));
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
      if (it == ids.end()) throw InputError(lr.path_of(key), json_string(id), "unknown node id: no entry of /nodes has it");
      return it->second;
    };
    const std::int32_t src = endpoint("src");
    const std::int32_t dst = endpoint("dst");
    if (src == dst) throw InputError(lr.path_of("dst"), json_string(lr.require_string("dst")), "a link must join two different nodes");
    const BytesPerSecond bw = gigabytes_per_second(lr.require_number("bandwidth_gbps", kBandwidthGbps));
    const Seconds latency = microseconds(lr.require_number("latency_us", kLatencyUs));
    const hw::LinkTier tier = tier_of(require_enum(lr, "tier", kTiers));
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
      throw InputError("/schema", json_string(schema), "unsupported topology schema", json_string(std::string(kTopologySchema)));
    }
    hw::Topology t;
    t.name = require_nonempty(r, "name");
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
  out += "  \"schema\": " + json_string(std::string(kTopologySchema)) + ",\n";
  out += "  \"name\": " + json_string(t.name) + ",\n";
  out += "  \"description\": " + json_string(t.description) + ",\n";
  out += "  \"gpu\": " + json_string(t.gpu) + ",\n";
  out += "  \"nodes\": [\n";
  const auto& nodes = t.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const hw::TopoNode& n = nodes[i];
    out += "    {\"id\": " + json_string(n.name) + ", \"kind\": \"" + std::string(hw::to_string(n.kind)) + "\"";
    if (n.kind == hw::NodeKind::kGpu) out += ", \"gpu_index\": " + std::to_string(n.gpu_index);
    if (n.domain >= 0) out += ", \"domain\": " + std::to_string(n.domain);
    if (n.rail >= 0) out += ", \"rail\": " + std::to_string(n.rail);
    out += i + 1 < nodes.size() ? "},\n" : "}\n";
  }
  out += "  ],\n  \"links\": [\n";
  const auto all = hw::cables(t);
  for (std::size_t i = 0; i < all.size(); ++i) {
    const hw::TopoLink& l = t.links()[static_cast<std::size_t>(all[i].forward)];
    out += "    {\"src\": " + json_string(nodes[static_cast<std::size_t>(l.src)].name) +
           ", \"dst\": " + json_string(nodes[static_cast<std::size_t>(l.dst)].name) +
           ", \"bandwidth_gbps\": " + rounded(l.bandwidth.value() / kGB) +
           ", \"latency_us\": " + rounded(l.latency.value() * 1e6) + ", \"tier\": \"" + std::string(hw::to_string(l.tier)) +
           "\"";
    if (all[i].reverse < 0) out += ", \"bidirectional\": false";
    out += i + 1 < all.size() ? "},\n" : "}\n";
  }
  out += "  ]\n}\n";
  return out;
}

}  // namespace moesim::config
