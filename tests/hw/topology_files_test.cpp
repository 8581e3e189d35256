// Topology files: the preset files in topologies/ are exactly what the builders and the writer
// produce (so they never drift), they load back to the same graph, and every case of
// tests/invalid-topology is refused with its exact message, by the loader and by `moesim topo validate`.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "../refusal.hpp"
#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "config/hw_loader.hpp"
#include "config/topology_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "hw/topology.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

struct PresetFile {
  const char* file;
  const char* system;
  std::int64_t gpus;
};

const std::vector<PresetFile> kPresetFiles = {
    {"hgx-h100-16.json", "hgx-h100", 16},
    {"hgx-h100-64.json", "hgx-h100", 64},
    {"gb200-nvl72-72.json", "gb200-nvl72", 72},
    {"gb200-nvl72-144.json", "gb200-nvl72", 144},
};

std::string refusal(const std::string& path) { return test::refusal(config::load_topology_file, path); }
using test::first_line;
test::CommandResult run(const std::string& command, const fs::path& cwd) { return test::run_command(command, cwd.string()); }

void check_same_graph(const hw::Topology& a, const hw::Topology& b) {
  CHECK(a.name == b.name);
  CHECK(a.description == b.description);
  CHECK(a.gpu == b.gpu);
  REQUIRE(a.nodes().size() == b.nodes().size());
  for (std::size_t i = 0; i < a.nodes().size(); ++i) {
    const auto &x = a.nodes()[i], &y = b.nodes()[i];
    CAPTURE(x.name);
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.gpu_index == y.gpu_index);
    CHECK(x.domain == y.domain);
    CHECK(x.rail == y.rail);
  }
  REQUIRE(a.links().size() == b.links().size());
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    const auto &x = a.links()[i], &y = b.links()[i];
    CAPTURE(i);
    CHECK(x.src == y.src);
    CHECK(x.dst == y.dst);
    CHECK(x.tier == y.tier);
    CHECK(x.bandwidth.value() == doctest::Approx(y.bandwidth.value()).epsilon(1e-12));
    CHECK(x.latency.value() == doctest::Approx(y.latency.value()).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("the preset files in topologies/ are the builders' output") {
  std::vector<std::string> on_disk;
  for (const auto& e : fs::directory_iterator(test::source_dir() / "topologies")) {
    if (e.is_regular_file() && e.path().extension() == ".json") on_disk.push_back(e.path().filename().string());
  }
  std::sort(on_disk.begin(), on_disk.end());
  std::vector<std::string> expected;
  for (const auto& p : kPresetFiles) expected.emplace_back(p.file);
  std::sort(expected.begin(), expected.end());
  CHECK(on_disk == expected);  // a new file needs its entry in kPresetFiles

  for (const auto& p : kPresetFiles) {
    CAPTURE(p.file);
    const fs::path path = test::source_dir() / "topologies" / p.file;
    const hw::Topology built = hw::build_topology(config::load_system_preset(p.system, p.gpus));
    const std::string text = config::topology_to_json_text(built);
    CHECK_MESSAGE(text == read_text_file(path), "regenerate with: build/moesim topo export " << p.system << " --gpus "
                                                                                             << p.gpus << " --json topologies/"
                                                                                             << p.file);
    const hw::Topology loaded = config::load_topology_file(path.string());
    check_same_graph(built, loaded);
    CHECK(config::topology_to_json_text(loaded) == text);
    const auto a = hw::summarize(built), b = hw::summarize(loaded);
    CHECK(a.nvlink_bisection == b.nvlink_bisection);
    CHECK(a.network_bisection == b.network_bisection);
    CHECK(a.spines == b.spines);
    // Routing reads the same graph the same way.
    for (std::int32_t d = 1; d < built.num_gpus(); d += 7) CHECK(built.route(0, d) == loaded.route(0, d));
  }
}

TEST_CASE("a one-way link is written with bidirectional false and read back") {
  hw::Topology t;
  t.name = "one-way";
  t.gpu = "h100-sxm";
  (void)t.add_node({0, hw::NodeKind::kGpu, "a", 0, 0, -1});
  (void)t.add_node({0, hw::NodeKind::kGpu, "b", 1, 0, -1});
  (void)t.add_link(0, 1, gigabytes_per_second(12.5), microseconds(0.25), hw::LinkTier::kNvlink);
  (void)t.add_link(1, 0, gigabytes_per_second(25), microseconds(0.25), hw::LinkTier::kNvlink);
  const std::string text = config::topology_to_json_text(t);
  CHECK(text.find("\"bandwidth_gbps\": 12.5, \"latency_us\": 0.25, \"tier\": \"nvlink\", \"bidirectional\": false") !=
        std::string::npos);
  const hw::Topology back = config::parse_topology(config::parse_json_text(text, "x.json"), "x.json");
  check_same_graph(t, back);
}

TEST_CASE("every invalid topology is refused with its expected message") {
  fs::current_path(test::source_dir());
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator("tests/invalid-topology")) {
    if (entry.path().extension() == ".json") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  for (const char* required :
       {"dangling-link", "zero-bandwidth", "duplicate-id", "disconnected-gpu", "one-way-link", "unknown-key-top",
        "unknown-key-link", "wrong-type", "unknown-kind", "unknown-tier", "gpu-index-gap", "duplicate-gpu-index",
        "self-loop", "schema-mismatch", "malformed-json"}) {
    CAPTURE(required);
    CHECK(std::binary_search(cases.begin(), cases.end(), required));
  }
  const bool have_binary = fs::exists(test::moesim_binary());
  if (!have_binary) MESSAGE("build/moesim not built: the CLI half of this test is skipped");
  for (const auto& name : cases) {
    CAPTURE(name);
    const std::string json = "tests/invalid-topology/" + name + ".json";
    const std::string expect = "tests/invalid-topology/" + name + ".expect";
    REQUIRE_MESSAGE(fs::exists(expect), "missing " << expect);
    const std::string expected = first_line(read_text_file(expect));
    CHECK(expected.starts_with(json + ": at "));
    CHECK(refusal(json) == expected);
    if (have_binary) {
      const auto r = run("'" + test::moesim_binary() + "' topo validate " + json, test::source_dir());
      CHECK(r.exit_code == 2);
      CHECK(first_line(r.err) == "moesim: error: " + expected);
    }
  }
}

TEST_CASE("moesim topo commands") {
  if (!fs::exists(test::moesim_binary())) {
    MESSAGE("build/moesim not built: skipped");
    return;
  }
  const std::string bin = "'" + test::moesim_binary() + "'";
  const fs::path root = test::source_dir();
  const auto show = run(bin + " topo show hgx-h100 --gpus 16", root);
  CHECK(show.exit_code == 0);
  CHECK(show.out.find("gpus          16 in 2 NVLink domains") != std::string::npos);
  CHECK(show.out.find("switches      2 NVSwitch, 8 leaf, 2 spine") != std::string::npos);
  CHECK(show.out.find("  nvlink      1800 GB/s") != std::string::npos);
  CHECK(show.out.find("  network     400 GB/s") != std::string::npos);
  CHECK(show.out.find("32 x 450 GB/s") != std::string::npos);
  // The default size is one NVLink domain: one NVL72 rack.
  const auto rack = run(bin + " topo validate gb200-nvl72", root);
  CHECK(rack.exit_code == 0);
  CHECK(rack.out.rfind("ok: gb200-nvl72-72 (preset gb200-nvl72): 72 GPUs", 0) == 0);
  const auto file = run(bin + " topo validate topologies/hgx-h100-16.json", root);
  CHECK(file.exit_code == 0);
  CHECK(file.out.rfind("ok: hgx-h100-16 (topologies/hgx-h100-16.json)", 0) == 0);

  const fs::path out = test::binary_dir() / "topo-cli-test";
  fs::create_directories(out);
  const auto exported = run(bin + " topo export hgx-h100 --gpus 16 --dot x.dot --json x.json", out);
  CHECK(exported.exit_code == 0);
  CHECK(read_text_file(out / "x.json") == read_text_file(test::source_dir() / "topologies/hgx-h100-16.json"));
  CHECK(read_text_file(out / "x.dot").rfind("digraph \"hgx-h100-16\"", 0) == 0);

  const auto unknown = run(bin + " topo show hgx-h999", root);
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("neither a topology file nor a system preset; allowed: dgx-a100") != std::string::npos);
  const auto sized_file = run(bin + " topo show topologies/hgx-h100-16.json --gpus 8", root);
  CHECK(sized_file.exit_code == 2);
  const auto nothing = run(bin + " topo export hgx-h100", root);
  CHECK(nothing.exit_code == 2);
  CHECK(nothing.err.find("export needs --dot FILE and/or --json FILE") != std::string::npos);
}

TEST_CASE("the example of topologies/README.md loads and measures as the README says") {
  const std::string readme = read_text_file(test::source_dir() / "topologies/README.md");
  const auto start = readme.find("```json\n");
  REQUIRE(start != std::string::npos);
  const auto end = readme.find("```", start + 8);
  const std::string text = readme.substr(start + 8, end - start - 8);
  const hw::Topology t = config::parse_topology(config::parse_json_text(text, "README.md"), "README.md");
  const auto s = hw::summarize(t);
  CHECK(s.gpus == 4);
  CHECK(s.nvlink_bisection.value() / kGB == doctest::Approx(450));
  CHECK(s.network_bisection.value() / kGB == doctest::Approx(100));
  std::string path = "gpu0";
  for (std::int32_t l : t.route(0, 3)) path += " → " + t.nodes()[static_cast<std::size_t>(t.links()[static_cast<std::size_t>(l)].dst)].name;
  CHECK(path == "gpu0 → sw0 → gpu1 → nic1 → leaf0 → nic3 → gpu3");
  CHECK(readme.find(path) != std::string::npos);
}
