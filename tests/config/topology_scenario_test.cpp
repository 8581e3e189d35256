// A topology file as a scenario's system (docs/topology.md, "A topology file in a scenario"): the
// SystemSpec derived from a preset's exported file prices a step exactly as the preset does, the
// echo names the file and loads back, and each derivation rule refuses what it cannot turn into one
// figure per system.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "../test_paths.hpp"
#include "config/json_reader.hpp"
#include "config/scenario_loader.hpp"
#include "config/topology_loader.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "estimate/step_estimator.hpp"
#include "report/result_json.hpp"
#include "report/scenario_json.hpp"

namespace fs = std::filesystem;
using namespace moesim;
using config::Json;

namespace {

/// Relative comparison: doctest's default absolute scale of 1 would accept any two step times.
doctest::Approx rel(double expected) { return doctest::Approx(expected).epsilon(1e-9).scale(0); }

/// A small MoE scenario on `system`, its layout valid on 64 HGX and 72 NVL72 GPUs and crossing domains.
Json scenario_on(const Json& system) {
  Json j = Json::parse(R"({
    "model": {"num_layers": 8, "hidden_size": 1024, "num_attention_heads": 16, "num_query_groups": 4,
              "ffn_hidden_size": 4096, "vocab_size": 32000, "num_moe_experts": 8, "moe_router_topk": 2,
              "moe_ffn_hidden_size": 1024},
    "training": {"seq_length": 4096, "global_batch_size": 144},
    "parallel": {"tp": 2, "pp": 2, "ep": 4, "etp": 1}
  })");
  j["system"] = system;
  return j;
}

/// Scenarios written in the repository root: topology paths are relative to it.
Scenario parse_here(const Json& j) { return config::parse_scenario(j, "inline.json", test::source_dir()); }

std::string refusal(const Json& j) {
  try {
    (void)parse_here(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void check_same_system(const hw::SystemSpec& a, const hw::SystemSpec& b) {
  CHECK(a.gpu.name == b.gpu.name);
  CHECK(a.gpus == b.gpus);
  CHECK(a.gpus_per_node == b.gpus_per_node);
  CHECK(a.nvlink_domain_size == b.nvlink_domain_size);
  CHECK(a.nvls == b.nvls);
  CHECK(a.nics_per_gpu == b.nics_per_gpu);
  CHECK(a.nic_bandwidth.value() == rel(b.nic_bandwidth.value()));
  CHECK(a.nvlink_efficiency == b.nvlink_efficiency);
  CHECK(a.network_efficiency == b.network_efficiency);
  CHECK(a.nvlink_latency.value() == b.nvlink_latency.value());
  CHECK(a.network_latency.value() == b.network_latency.value());
}

/// The two-node example of topologies/README.md: 2 domains of 2 H100 (rails 0, 1), one NIC per GPU
/// (64 GB/s PCIe into a 50 GB/s NIC), one leaf. No preset has H100 in domains of 2.
Json tiny_topology() {
  return Json::parse(R"({
    "schema": "moesim.topology/1", "name": "tiny", "gpu": "h100-sxm",
    "nodes": [
      {"id": "gpu0", "kind": "gpu", "gpu_index": 0, "domain": 0, "rail": 0},
      {"id": "gpu1", "kind": "gpu", "gpu_index": 1, "domain": 0, "rail": 1},
      {"id": "gpu2", "kind": "gpu", "gpu_index": 2, "domain": 1, "rail": 0},
      {"id": "gpu3", "kind": "gpu", "gpu_index": 3, "domain": 1, "rail": 1},
      {"id": "sw0", "kind": "nvswitch", "domain": 0},
      {"id": "sw1", "kind": "nvswitch", "domain": 1},
      {"id": "nic0", "kind": "nic", "domain": 0, "rail": 0},
      {"id": "nic1", "kind": "nic", "domain": 0, "rail": 1},
      {"id": "nic2", "kind": "nic", "domain": 1, "rail": 0},
      {"id": "nic3", "kind": "nic", "domain": 1, "rail": 1},
      {"id": "leaf0", "kind": "leaf"}
    ],
    "links": [
      {"src": "gpu0", "dst": "sw0", "bandwidth_gbps": 450, "latency_us": 1.7, "tier": "nvlink"},
      {"src": "gpu1", "dst": "sw0", "bandwidth_gbps": 450, "latency_us": 1.7, "tier": "nvlink"},
      {"src": "gpu2", "dst": "sw1", "bandwidth_gbps": 450, "latency_us": 1.7, "tier": "nvlink"},
      {"src": "gpu3", "dst": "sw1", "bandwidth_gbps": 450, "latency_us": 1.7, "tier": "nvlink"},
      {"src": "gpu0", "dst": "nic0", "bandwidth_gbps": 64, "latency_us": 7, "tier": "pcie"},
      {"src": "gpu1", "dst": "nic1", "bandwidth_gbps": 64, "latency_us": 7, "tier": "pcie"},
      {"src": "gpu2", "dst": "nic2", "bandwidth_gbps": 64, "latency_us": 7, "tier": "pcie"},
      {"src": "gpu3", "dst": "nic3", "bandwidth_gbps": 64, "latency_us": 7, "tier": "pcie"},
      {"src": "nic0", "dst": "leaf0", "bandwidth_gbps": 50, "latency_us": 0, "tier": "network"},
      {"src": "nic1", "dst": "leaf0", "bandwidth_gbps": 50, "latency_us": 0, "tier": "network"},
      {"src": "nic2", "dst": "leaf0", "bandwidth_gbps": 50, "latency_us": 0, "tier": "network"},
      {"src": "nic3", "dst": "leaf0", "bandwidth_gbps": 50, "latency_us": 0, "tier": "network"}
    ]
  })");
}

config::DerivedSystem derive(const Json& topology) {
  return config::derive_system_spec(config::parse_topology(topology, "tiny.json"), "tiny.json");
}

std::string derive_refusal(const Json& topology) {
  try {
    (void)derive(topology);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a preset's exported topology file prices a step exactly as the preset") {
  struct Pair {
    const char* file;
    const char* preset;
    int gpus;
  };
  for (const Pair& p : {Pair{"topologies/hgx-h100-64.json", "hgx-h100", 64},
                        Pair{"topologies/gb200-nvl72-72.json", "gb200-nvl72", 72}}) {
    CAPTURE(p.file);
    const Scenario from_file = parse_here(scenario_on(Json{{"topology", p.file}}));
    const Scenario from_preset = parse_here(scenario_on(Json{{"preset", p.preset}, {"gpus", p.gpus}}));
    check_same_system(from_file.system, from_preset.system);
    CHECK(from_file.topology_file == p.file);
    CHECK(from_file.load_warnings.empty());
    CHECK(from_preset.topology_file.empty());
    const Result a = estimate::estimate_step(from_file);
    const Result b = estimate::estimate_step(from_preset);
    CHECK(a.step_time_s > 0);
    CHECK(a.step_time_s == rel(b.step_time_s));
    CHECK(a.breakdown.ep_comm == rel(b.breakdown.ep_comm));
    CHECK(a.breakdown.dp_comm == rel(b.breakdown.dp_comm));
  }
}

TEST_CASE("every figure derived from a topology file names its origin") {
  const Scenario s = parse_here(scenario_on(Json{{"topology", "topologies/gb200-nvl72-72.json"}}));
  CHECK(s.system.name == "gb200-nvl72-72");
  CHECK(s.system.gpus_per_node == 4);  // rails 0-3: the 4 GPUs of a compute tray
  CHECK(s.system.nvlink_domain_size == 72);
  CHECK(s.system.host == hw::HostKind::kGrace);  // the gb200-nvl72 preset's, matched on GPU and domain
  for (const char* key : {"gpus", "gpus_per_node", "host", "nvlink_domain_size", "nvls", "nics_per_gpu", "nic_bandwidth_gbit",
                          "nvlink_efficiency", "network_efficiency", "nvlink_latency_us", "network_latency_us"}) {
    CAPTURE(key);
    REQUIRE(s.system.sources.count(key) == 1);
    CHECK_FALSE(s.system.sources.at(key).empty());
  }
  CHECK(s.system.sources.at("gpus_per_node").find("4 distinct rails") != std::string::npos);
  CHECK(s.system.sources.at("nvlink_latency_us").starts_with("[preset] gb200-nvl72,"));
}

TEST_CASE("the echo of a topology scenario names the file as written and loads back") {
  Json system{{"topology", "topologies/hgx-h100-16.json"}, {"gpu", "h200-sxm"},
              {"profile", "tests/profile/data/h200-synthetic.json"}};
  const Scenario s = parse_here(scenario_on(system));
  CHECK(s.system.gpu.name == "h200-sxm");
  CHECK(s.system.gpus == 16);
  CHECK(s.system.nvlink_efficiency == 0.822);  // hgx-h100's: matched on the file's GPU, as a preset keeps its figures
  const Json echo = report::scenario_to_json(s);
  CHECK(echo["system"] == Json::parse(R"({"topology": "topologies/hgx-h100-16.json", "gpus": 16, "gpu": "h200-sxm",
                                          "profile": "tests/profile/data/h200-synthetic.json"})"));
  const Scenario again = parse_here(echo);
  CHECK(report::scenario_to_json(again) == echo);
}

TEST_CASE("a topology path is relative to the scenario's folder") {
  const fs::path dir = test::source_dir() / "topologies";
  const Scenario s = config::parse_scenario(scenario_on(Json{{"topology", "hgx-h100-16.json"}}), "s.json", dir);
  CHECK(s.system.gpus == 16);
  CHECK(s.topology_file == "hgx-h100-16.json");
  const std::string absolute = (dir / "hgx-h100-16.json").string();
  CHECK(config::parse_scenario(scenario_on(Json{{"topology", absolute}}), "s.json", "/nonexistent").system.gpus == 16);
}

TEST_CASE("system refusals around topology files") {
  CHECK(refusal(scenario_on(Json{{"topology", 3}})) ==
        "inline.json: at /system/topology: value 3: expected a string, got an integer");
  CHECK(refusal(scenario_on(Json{{"topology", ""}})).starts_with(
      "inline.json: at /system/topology: value \"\": topology file not found"));
  CHECK(refusal(scenario_on(Json{{"topology", "topologies/hgx-h100-16.json"}, {"gpu", "h900"}}))
            .starts_with("inline.json: at /system/gpu: value \"h900\": unknown GPU preset; allowed: "));
  CHECK(refusal(scenario_on(Json{{"gpus", 16}})).starts_with(
      "inline.json: at /system/preset: required field is missing (or give \"topology\": a topology file); allowed: "));
}

TEST_CASE("derivation rules on a hand-written topology") {
  SUBCASE("no preset has the GPU and domain size: defaults, named in sources and a warning") {
    const config::DerivedSystem d = derive(tiny_topology());
    CHECK(d.matched_preset.empty());
    CHECK(d.system.gpus == 4);
    CHECK(d.system.nvlink_domain_size == 2);
    CHECK(d.system.gpus_per_node == 2);  // rails 0 and 1
    CHECK(d.system.nics_per_gpu == 1);
    CHECK(d.system.nic_bandwidth.value() == rel(50e9));  // the NIC's 50 GB/s uplink, not the 64 GB/s PCIe link
    CHECK_FALSE(d.system.nvls);
    CHECK(d.system.nvlink_efficiency == 0.822);
    CHECK(d.system.network_latency.value() == rel(14e-6));
    CHECK(d.system.sources.at("nvls").starts_with("[default] no system preset has GPU h100-sxm with NVLink domains of 2"));
    REQUIRE(d.warnings.size() == 1);
    CHECK(d.warnings[0].starts_with("topology tiny.json: no system preset has GPU h100-sxm with NVLink domains of 2 GPUs"));
  }
  SUBCASE("without rails: one host per domain unless a preset says otherwise") {
    Json t = tiny_topology();
    for (auto& n : t["nodes"]) n.erase("rail");
    CHECK(derive(t).system.gpus_per_node == 2);
    Json rack = config::load_json_file((test::source_dir() / "topologies/gb200-nvl72-72.json").string());
    for (auto& n : rack["nodes"]) {
      if (n["kind"] == "gpu") n.erase("rail");
    }
    const config::DerivedSystem d = derive(rack);
    CHECK(d.matched_preset == "gb200-nvl72");
    CHECK(d.system.gpus_per_node == 4);  // the compute tray of the preset, not the 72-GPU domain
    CHECK(d.system.sources.at("gpus_per_node").starts_with("[preset] not every GPU of topology tiny.json has a rail; "
                                                           "taken from preset gb200-nvl72"));
  }
  SUBCASE("NVLink domains of different sizes") {
    Json t = tiny_topology();
    t["nodes"][1]["domain"] = 1;
    t["links"][1]["dst"] = "sw1";
    CHECK(derive_refusal(t) ==
          "tiny.json: at /nodes/1/domain: value 1: every NVLink domain must hold the same number of GPUs (a scenario "
          "takes one nvlink_domain_size): domain 1 has 3 GPUs, domain 0 (of gpu_index 0) has 1; allowed: domains of 1 "
          "GPUs each");
  }
  SUBCASE("rails that do not divide the domain") {
    Json t = tiny_topology();
    t["nodes"][1]["rail"] = 2;
    t["nodes"][3]["rail"] = 3;
    CHECK(derive_refusal(t) ==
          "tiny.json: at /nodes/3/rail: value 3: a host's GPUs share one NVLink domain, so the number of rails (a GPU's "
          "rail is its index inside its host) must divide the GPUs per domain (2); the GPUs use 3 rails; allowed: rail "
          "counts that divide 2");
  }
  SUBCASE("GPUs with different NICs") {
    Json t = tiny_topology();
    t["links"][11]["bandwidth_gbps"] = 25;
    CHECK(derive_refusal(t) ==
          "tiny.json: at /nodes/3: value \"gpu3\": every GPU needs the same NICs (nics_per_gpu and nic_bandwidth are one "
          "figure per system): gpu_index 0 has 1 NIC(s) carrying 50 GB/s in all, gpu_index 3 has 1 NIC(s) carrying "
          "25 GB/s in all");
  }
  SUBCASE("a file's NVLink rate other than the GPU preset's is reported") {
    Json t = tiny_topology();
    for (int i = 0; i < 4; ++i) t["links"][i]["bandwidth_gbps"] = 300;
    const config::DerivedSystem d = derive(t);
    REQUIRE(d.warnings.size() == 2);
    CHECK(d.warnings[1] == "topology tiny.json: gpu0 has 300 GB/s of NVLink links out, GPU preset h100-sxm has "
                           "450 GB/s per GPU; the estimate uses the preset's figure");
  }
}
