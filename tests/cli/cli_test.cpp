#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "../test_paths.hpp"
#include "../run_command.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {
std::string bin() { return test::moesim_binary(); }
std::string root() { return test::source_dir().string(); }
std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}
}  // namespace

TEST_CASE("--version and --help exit 0") {
  auto r = test::run_command(bin() + " --version", root());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("moesim 0.") == 0);
  r = test::run_command(bin() + " simulate --help", root());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--json") != std::string::npos);
  r = test::run_command(bin() + " --no-such-flag", root());
  CHECK(r.exit_code == 2);
  r = test::run_command(bin(), root());
  CHECK(r.exit_code == 2);
}

TEST_CASE("simulate writes every required result field, byte-identical on a re-run") {
  const fs::path examples = test::shared_dir() / "spec/examples";
  if (!fs::exists(examples)) {
    MESSAGE("skipped: " << examples << " not present");
    return;
  }
  const fs::path out = test::binary_dir() / "cli-test-results";
  fs::create_directories(out);
  for (const auto& e : fs::directory_iterator(examples)) {
    CAPTURE(e.path().string());
    const std::string a = (out / ("a-" + e.path().filename().string())).string();
    const std::string b = (out / ("b-" + e.path().filename().string())).string();
    auto r1 = test::run_command(bin() + " simulate '" + e.path().string() + "' --json '" + a + "'", root());
    REQUIRE_MESSAGE(r1.exit_code == 0, r1.err);
    CHECK(r1.out.find("breakdown") != std::string::npos);
    auto r2 = test::run_command(bin() + " simulate -q '" + e.path().string() + "' --json '" + b + "'", root());
    REQUIRE(r2.exit_code == 0);
    CHECK(r2.out.empty());
    const std::string ta = test::slurp(a), tb = test::slurp(b);
    CHECK(ta == tb);
    const auto j = nlohmann::json::parse(ta);
    CHECK(j.at("schema") == "moesim.result/1");
    for (const char* k : {"scenario", "fidelity", "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu",
                          "model_tflops_per_gpu", "mfu", "flops_convention", "memory", "breakdown", "warnings", "seed",
                          "moesim_version"}) {
      CHECK_MESSAGE(j.contains(k), k);
    }
    for (const char* k : {"peak_bytes", "per_stage", "fits", "capacity_bytes"}) CHECK_MESSAGE(j.at("memory").contains(k), k);
    for (const char* k : {"weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "buffers_bytes", "peak_bytes",
                          "peak_op"}) {
      CHECK_MESSAGE(j.at("memory").at("per_stage").at(0).contains(k), k);
    }
    for (const char* k : {"compute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "dp_comm", "bubble", "exposed_comm",
                          "optimizer", "moe_imbalance"}) {
      CHECK_MESSAGE(j.at("breakdown").contains(k), k);
    }
    CHECK(j.at("step_time_s").get<double>() > 0);
    CHECK(j.at("fidelity") == "simulation");  // the default fidelity
    CHECK(j.at("simulation").at("ranks_simulated").get<int>() >= 1);
  }
}

TEST_CASE("every invalid input exits 2 with its one-line message") {
  const fs::path dir = test::source_dir() / "tests/invalid";
  int cases = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".expect") continue;
    fs::path input = e.path();
    input.replace_extension(".json");
    CAPTURE(input.string());
    const std::string rel = fs::relative(input, test::source_dir()).string();
    const std::string out = (test::binary_dir() / "cli-test-never-written.json").string();
    fs::remove(out);
    auto r = test::run_command(bin() + " simulate '" + rel + "' --json '" + out + "'", root());
    CHECK(r.exit_code == 2);
    CHECK(trim(r.err) == "moesim: error: " + trim(test::slurp(e.path().string())));
    CHECK_FALSE(fs::exists(out));
    ++cases;
  }
  CHECK(cases >= 15);
  auto r = test::run_command(bin() + " simulate no/such/file.json", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no/such/file.json: at /: file not found, and not a built-in scenario; allowed: ") != std::string::npos);
  r = test::run_command(bin() + " simulate mixtral-8x7b-h100-64 --fidelity exact", root());
  CHECK(r.exit_code == 2);  // not one of simulation, estimate
}

TEST_CASE("catalogue commands list the presets") {
  auto r = test::run_command(bin() + " models list", root());
  CHECK(r.exit_code == 0);
  for (const char* m : {"mixtral-8x7b", "deepseek-v3", "qwen3-235b-a22b", "esm2-15b", "llama-3.1-405b"}) {
    CHECK_MESSAGE(r.out.find(m) != std::string::npos, m);
  }
  r = test::run_command(bin() + " systems list", root());
  CHECK(r.exit_code == 0);
  for (const char* s : {"dgx-a100", "hgx-h100", "gb200-nvl72", "gb300-nvl72"}) CHECK_MESSAGE(r.out.find(s) != std::string::npos, s);
  r = test::run_command(bin() + " systems show hgx-h100", root());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("sources") != std::string::npos);
  r = test::run_command(bin() + " models show nope", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown model preset") != std::string::npos);
  r = test::run_command(bin() + " scenarios list", root());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("mixtral-8x7b-h100-64") != std::string::npos);
}

TEST_CASE("accuracy --point writes the point's scenario, which simulate reproduces") {
  const std::string id = "mb-26-06-pre-training-dgx-h100-qwen3-30b-a3b-fp8-16-0-tokens_per_s_per_gpu";
  const fs::path scenario = test::binary_dir() / "cli-test-results/accuracy-point.json";
  fs::create_directories(scenario.parent_path());
  fs::remove(scenario);
  auto r = test::run_command(bin() + " accuracy --point " + id + " --scenario-out '" + scenario.string() + "'", root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("1 points run") != std::string::npos);
  // "<id> tokens_per_s_per_gpu <published> <predicted> <error>"
  const auto at = r.out.find(id + " ");
  REQUIRE(at != std::string::npos);
  std::istringstream line(r.out.substr(at));
  std::string name, metric;
  double published = 0, predicted = 0;
  line >> name >> metric >> published >> predicted;
  CHECK(metric == "tokens_per_s_per_gpu");
  CHECK(published == doctest::Approx(8826));
  const auto written = nlohmann::json::parse(test::slurp(scenario.string()));
  CHECK(written.at("schema") == "moesim.scenario/1");
  CHECK(written.at("name") == id);
  CHECK(written.at("moe").at("dispatcher") == "hybridep");  // the recipe setting the loader applied

  const fs::path result = test::binary_dir() / "cli-test-results/accuracy-point-result.json";
  r = test::run_command(bin() + " simulate -q '" + scenario.string() + "' --json '" + result.string() + "'", root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(test::slurp(result.string()));
  CHECK(j.at("tokens_per_s_per_gpu").get<double>() == doctest::Approx(predicted).epsilon(1e-3));

  r = test::run_command(bin() + " accuracy --point no-such-point", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("at --point: value no-such-point: no point has this id") != std::string::npos);
  r = test::run_command(bin() + " accuracy --point korthikanti22-530B-2240gpu-full-mfu", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("the point is skipped (global batch not published)") != std::string::npos);
  r = test::run_command(bin() + " accuracy --scenario-out x.json", root());
  CHECK(r.exit_code == 2);  // --scenario-out needs --point
  CHECK(r.err.find("--scenario-out requires --point") != std::string::npos);
  r = test::run_command(bin() + " accuracy --point " + id + " --scenario-out no/such/folder/x.json", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == "moesim: error: at --scenario-out: value no/such/folder/x.json: its folder no/such/folder does not "
                       "exist; allowed: a new file or a regular file in an existing, writable folder, or - for standard output");
}

// The older releases of a Megatron-Bridge run are evidence (docs/accuracy.md, Round 13), never judged: the
// newest release of each run stays out, no bound is printed and the exit status is 0 whatever the error.
TEST_CASE("accuracy --superseded runs only the releases a newer one replaced, and judges no bound") {
  auto r = test::run_command(bin() + " accuracy --superseded --group megatron-bridge", root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // A superseded row (26.04.01, replaced by 26.08) runs; the newest release of the same run does not.
  CHECK(r.out.find("mb-26-04-01-pre-training-dgx-gb200-qwen3-30b-a3b-mxfp8-8-0-tokens_per_s_per_gpu ") != std::string::npos);
  CHECK(r.out.find("mb-26-08-pre-training-dgx-gb200-qwen3-30b-a3b-mxfp8-8-0-tokens_per_s_per_gpu ") == std::string::npos);
  CHECK(r.out.find("bounds: not judged (superseded releases") != std::string::npos);
  CHECK(r.out.find("bounds (docs/accuracy.md") == std::string::npos);
  CHECK(r.out.find("some bounds are not met") == std::string::npos);

  r = test::run_command(bin() + " accuracy --superseded -v --group megatron-bridge", root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("skipped mb-26-08-pre-training-dgx-gb200-qwen3-30b-a3b-mxfp8-8-0-tokens_per_s_per_gpu: the newest "
                   "release of its run (--superseded runs only the releases it replaced)") != std::string::npos);

  r = test::run_command(bin() + " accuracy --superseded --cv", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--cv excludes --superseded") != std::string::npos);
}

// The exact device-limited expert loads enumerate ordered domain choices; past 4e6 moesim refuses the
// scenario at simulation time (the loader cannot know the EP group's NVLink domains): exit 2, one line.
TEST_CASE("a device limit too costly to enumerate exits 2 from simulate and skew, naming the file") {
  const std::string scenario = "tests/cli/data/device-limited-too-many-domains.json";
  const std::string message = "moesim: error: " + scenario +
                              ": at /moe/routing/device_limited_nodes: value 5: the expert loads under a limit of 5 "
                              "of the EP group's 32 NVLink domains take 2.42e+07 ordered domain choices to compute, "
                              "more than 4e+06; allowed: a limit whose domains!/(domains - limit)! stays within 4e6 "
                              "(M <= 4 for 32 domains), or balanced routing";
  const fs::path out = test::binary_dir() / "cli-test-never-written.json";
  for (const std::string cmd : {" simulate ", " skew "}) {
    CAPTURE(cmd);
    fs::remove(out);
    const auto r = test::run_command(bin() + cmd + scenario + " --json '" + out.string() + "'", root());
    CHECK(r.exit_code == 2);
    CHECK(trim(r.err) == message);
    CHECK_FALSE(fs::exists(out));
  }
  // The closed form prices the expected most loaded EP rank from the same loads: it refuses them too.
  fs::remove(out);
  const auto r = test::run_command(bin() + " simulate --fidelity estimate " + scenario + " --json '" + out.string() + "'", root());
  CHECK(r.exit_code == 2);
  CHECK(trim(r.err) == message);
  CHECK_FALSE(fs::exists(out));
}

// Issue 33: interleaving with a micro-batch count that is not a multiple of pp stalled the simulation
// (exit 1, internal error). Megatron-Core refuses that layout with its default micro-batch group, so
// moesim now refuses it as an input error at both fidelities; the same layout with 16 micro-batches runs.
TEST_CASE("issue 33: PP8 VPP2 with 12 micro-batches exits 2 with Megatron's rule; with 16 it simulates") {
  const std::string scenario = "tests/cli/data/issue33-pp8-vpp2-12-microbatches.json";
  for (const std::string fidelity : {"simulation", "estimate"}) {
    CAPTURE(fidelity);
    const auto r = test::run_command(bin() + " simulate " + scenario + " --fidelity " + fidelity, root());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("at /parallel/vpp: value 2: vpp > 1 needs the micro-batch count (global_batch_size / "
                     "(micro_batch_size·dp) = 12 / 1 = 12) to be a multiple of pp (8): Megatron-Core") !=
          std::string::npos);
    CHECK(r.err.find("internal error") == std::string::npos);
  }
  auto j = nlohmann::json::parse(test::slurp((test::source_dir() / scenario).string()));
  j["training"]["global_batch_size"] = 16;
  const fs::path sixteen = test::binary_dir() / "cli-test-issue33-16-microbatches.json";
  const fs::path out = test::binary_dir() / "cli-test-issue33-result.json";
  {
    std::ofstream f(sixteen);
    f << j.dump();
  }
  const auto r = test::run_command(bin() + " simulate -q '" + sixteen.string() + "' --json '" + out.string() + "'", root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto result = nlohmann::json::parse(test::slurp(out.string()));
  // 16 × 4096 tokens of an 8 B model with full recompute on 8 H100: about 4e15 FLOPs, a second or two.
  const double step = result.at("step_time_s").get<double>();
  CHECK(step > 0.5);
  CHECK(step < 5.0);
  fs::remove(sixteen);
  fs::remove(out);
}
