// `moesim topo show|validate|export SYSTEM_OR_FILE`: the topology graph of a cluster preset (sized by
// --gpus) or of a topology file, its counts and bisection bandwidths, and its export as Graphviz or as
// a topology file (docs/topology.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "config/hw_loader.hpp"
#include "config/topology_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"
#include "hw/topology.hpp"

namespace moesim::cli {
namespace {

struct TopoOptions {
  std::string source;
  std::int64_t gpus = 0;  ///< 0: one NVLink domain (an HGX node, an NVL72 rack)
  double oversubscription = 1.0;
  std::int32_t leaf_radix = hw::FabricOptions{}.leaf_radix;
  std::string dot_out, json_out;
};

struct Loaded {
  hw::Topology topology;
  std::string origin;  ///< the file, or "preset NAME"
};

Loaded resolve(const TopoOptions& o) {
  std::error_code ec;
  const bool is_file = std::filesystem::is_regular_file(o.source, ec);
  const auto presets = config::system_preset_names();
  const bool is_preset = std::find(presets.begin(), presets.end(), o.source) != presets.end();
  const bool looks_like_path = o.source.find('/') != std::string::npos || o.source.ends_with(".json");
  if (is_file || (!is_preset && looks_like_path)) {
    if (o.gpus != 0) {
      throw InputError("--gpus", std::to_string(o.gpus), "--gpus sizes a system preset; a topology file lists its own GPUs");
    }
    return {config::load_topology_file(o.source), o.source};  // a missing file fails here, naming it
  }
  if (!is_preset) {
    throw InputError("SYSTEM_OR_FILE", "\"" + o.source + "\"", "neither a topology file nor a system preset",
                     join(presets));
  }
  hw::SystemSpec system = config::load_system_preset(o.source, 1, "SYSTEM_OR_FILE");
  system.gpus = o.gpus != 0 ? o.gpus : system.nvlink_domain_size;
  hw::Topology t = hw::build_topology(system, {o.oversubscription, o.leaf_radix});
  t.validate();
  return {std::move(t), "preset " + o.source};
}

std::string gbps(BytesPerSecond bw) { return format_number(std::round(bw.value() / kGB * 1000) / 1000) + " GB/s"; }

/// "32 x 450 GB/s" per distinct bandwidth of the tier's links, fastest first.
std::string bandwidth_mix(const hw::Topology& t, hw::LinkTier tier) {
  std::map<double, std::int64_t, std::greater<>> count;
  for (const hw::TopoLink& l : t.links()) {
    if (l.tier == tier) ++count[l.bandwidth.value()];
  }
  std::string out;
  for (const auto& [bw, c] : count) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} x {}", c, gbps(BytesPerSecond(bw)));
  }
  return out.empty() ? "-" : out;
}

std::string describe_route(const hw::Topology& t, const std::vector<std::int32_t>& path) {
  if (path.empty()) return "(same GPU)";
  const auto& nodes = t.nodes();
  std::string out = nodes[static_cast<std::size_t>(t.links()[static_cast<std::size_t>(path.front())].src)].name;
  Seconds latency;
  for (std::int32_t l : path) {
    const hw::TopoLink& link = t.links()[static_cast<std::size_t>(l)];
    out += " -> " + nodes[static_cast<std::size_t>(link.dst)].name;
    latency += link.latency;
  }
  return out + fmt::format("  ({} hops, {} us)", path.size(), format_number(std::round(latency.value() * 1e9) / 1e3));
}

int show(const TopoOptions& o) {
  const Loaded loaded = resolve(o);
  const hw::Topology& t = loaded.topology;
  const hw::TopologySummary s = hw::summarize(t);
  std::printf("topology      %s (%s)\n", t.name.c_str(), loaded.origin.c_str());
  if (!t.description.empty()) std::printf("description   %s\n", t.description.c_str());
  std::printf("gpu           %s\n", t.gpu.empty() ? "-" : t.gpu.c_str());
  std::printf("gpus          %d in %d NVLink domain%s\n", s.gpus, s.domains, s.domains == 1 ? "" : "s");
  std::printf("switches      %d NVSwitch, %d leaf, %d spine\n", s.nvswitches, s.leaves, s.spines);
  std::printf("nics          %d\n", s.nics);
  std::printf("links         directed (a cable is two links)\n");
  std::printf("  nvlink      %6lld  %s\n", static_cast<long long>(s.nvlink_links), bandwidth_mix(t, hw::LinkTier::kNvlink).c_str());
  std::printf("  pcie        %6lld  %s\n", static_cast<long long>(s.pcie_links), bandwidth_mix(t, hw::LinkTier::kPcie).c_str());
  std::printf("  network     %6lld  %s\n", static_cast<long long>(s.network_links), bandwidth_mix(t, hw::LinkTier::kNetwork).c_str());
  std::printf("bisection     max-flow between two GPU halves, one direction\n");
  std::printf("  nvlink      %s (largest NVLink domain, its gpu_index halves)\n", gbps(s.nvlink_bisection).c_str());
  std::printf("  network     %s (NVLink excluded; the smaller of the gpu_index and the rail half cuts)\n",
              gbps(s.network_bisection).c_str());
  if (s.gpus >= 2) {
    const std::int32_t last = s.gpus - 1;
    std::printf("route         gpu_index 0 -> %d, PXN:    %s\n", last, describe_route(t, t.route(0, last)).c_str());
    std::printf("              gpu_index 0 -> %d, no PXN: %s\n", last, describe_route(t, t.route(0, last, {false})).c_str());
  }
  return 0;
}

int validate(const TopoOptions& o) {
  const Loaded loaded = resolve(o);
  const hw::TopologySummary s = hw::summarize(loaded.topology);
  std::printf("ok: %s (%s): %d GPUs, %d NVLink domain(s), %d NVSwitch, %d NIC, %d leaf, %d spine, %zu links\n",
              loaded.topology.name.c_str(), loaded.origin.c_str(), s.gpus, s.domains, s.nvswitches, s.nics, s.leaves,
              s.spines, loaded.topology.links().size());
  return 0;
}

int export_files(const TopoOptions& o) {
  if (o.dot_out.empty() && o.json_out.empty()) {
    throw InputError("--dot", "", "export needs --dot FILE and/or --json FILE");
  }
  OutputBatch outputs;
  outputs.expect("--dot", o.dot_out);
  outputs.expect("--json", o.json_out);
  const Loaded loaded = resolve(o);
  if (!o.dot_out.empty()) outputs.write(o.dot_out, hw::to_dot(loaded.topology));
  if (!o.json_out.empty()) outputs.write(o.json_out, config::topology_to_json_text(loaded.topology));
  outputs.commit();
  // What was written, unless standard output carries the file itself.
  if (!o.dot_out.empty() && o.dot_out != kStdStream) {
    std::printf("wrote %s (Graphviz: dot -Tsvg %s -o topology.svg)\n", o.dot_out.c_str(), o.dot_out.c_str());
  }
  if (!o.json_out.empty() && o.json_out != kStdStream) {
    std::printf("wrote %s (%s)\n", o.json_out.c_str(), std::string(config::kTopologySchema).c_str());
  }
  return 0;
}

void add_source_options(CLI::App* sub, TopoOptions& o) {
  sub->add_option("topology", o.source,
                  "a topology file (topologies/*.json), else a system preset name (`moesim systems list`)")
      ->required();
  sub->add_option("--gpus", o.gpus, "GPUs of the preset (default: one NVLink domain: an HGX node, an NVL72 rack)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  sub->add_option("--oversubscription", o.oversubscription, "preset fabric: leaf downlink / uplink bandwidth (default 1)")
      ->check(finite_range(1.0, 1024.0));
  sub->add_option("--leaf-radix", o.leaf_radix, "preset fabric: hosts per leaf, one leaf per rail per pod (default 64)")
      ->check(CLI::Range(1, 1 << 20));
}

}  // namespace

void register_topo(CLI::App& app, Commands& commands) {
  auto* topo = app.add_subcommand("topo", "The topology graph of a cluster preset or topology file: show, validate, export.");
  topo->require_subcommand(1);
  auto opt = std::make_shared<TopoOptions>();
  auto* show_cmd = topo->add_subcommand("show", "GPUs, switches, NICs, links per tier, bisection bandwidths, a sample route.");
  add_source_options(show_cmd, *opt);
  show_cmd->callback([&commands, opt] { commands.set([opt] { return show(*opt); }); });
  auto* validate_cmd = topo->add_subcommand("validate", "Load and check a topology; prints \"ok: ...\" or the first fault.");
  add_source_options(validate_cmd, *opt);
  validate_cmd->callback([&commands, opt] { commands.set([opt] { return validate(*opt); }); });
  auto* export_cmd = topo->add_subcommand("export", "Write the topology as Graphviz (--dot) and/or as a topology file (--json).");
  add_source_options(export_cmd, *opt);
  export_cmd->add_option("--dot", opt->dot_out, "Graphviz output file");
  export_cmd->add_option("--json", opt->json_out, "topology file output (schema moesim.topology/1)");
  export_cmd->callback([&commands, opt] { commands.set([opt] { return export_files(*opt); }); });
}

}  // namespace moesim::cli
