// `moesim calibrate` (docs/profile.md): the request it derives from a model or scenario, and — on a
// machine without a GPU — exit code 2 with "no CUDA device found" and nothing written (issue 9, must-show 1).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "cli/gpu_presence.hpp"
#include "config/json_reader.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {
std::string bin() { return test::moesim_binary(); }
std::string root() { return test::source_dir().string(); }
bool gpu_present() { return cli::cuda_device_present(); }
}  // namespace

TEST_CASE("without a GPU, moesim calibrate exits 2 with 'no CUDA device found' and writes nothing") {
  if (gpu_present()) {
    MESSAGE("skipped: a CUDA device is present (the GPU tests calibrate on it)");
    return;
  }
  const fs::path out = test::binary_dir() / "calibrate-test-never-written.json";
  fs::remove(out);
  for (const std::string args : {"--model mixtral-8x7b --quick", "--scenario mixtral-8x7b-h100-64", ""}) {
    CAPTURE(args);
    const auto r = test::run_command(bin() + " calibrate " + args + " --out '" + out.string() + "'", root());
    CHECK(r.exit_code == 2);
    CHECK(r.err.starts_with("moesim calibrate: no CUDA device found"));
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("moesim calibrate --request writes the shapes a scenario runs, without a GPU") {
  const fs::path req = test::binary_dir() / "calibrate-test-request.json";
  fs::remove(req);
  const auto r = test::run_command(bin() + " calibrate --scenario mixtral-8x7b-h100-64 --request '" + req.string() + "'", root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("moesim calibrate: wrote ") != std::string::npos);
  const config::Json j = config::load_json_file(req.string());
  CHECK(j.at("schema") == "moesim.calibration-request/1");
  // Mixtral 8x7B, tp 1, seq 4096: the QKV projection (4096 tokens × (32 + 2·8)·128 × 4096) is one of the GEMMs.
  bool qkv = false;
  for (const auto& g : j.at("gemm")) {
    CHECK(g.at("precision") == "bf16");
    qkv = qkv || (g.at("m") == 4096 && g.at("n") == 6144 && g.at("k") == 4096);
  }
  CHECK(qkv);
  // Expert GEMMs: 1 local expert at EP 8 with 4096 × 2 routed copies, fc1 (n = 2·14336) and fc2.
  bool fc1 = false, fc2 = false;
  for (const auto& g : j.at("grouped_gemm")) {
    fc1 = fc1 || (g.at("tokens") == config::Json::array({8192}) && g.at("n") == 28672 && g.at("k") == 4096);
    fc2 = fc2 || (g.at("tokens") == config::Json::array({8192}) && g.at("n") == 4096 && g.at("k") == 14336);
  }
  CHECK(fc1);
  CHECK(fc2);
  CHECK(j.at("attention") ==
        config::Json::parse(R"([{"batch_heads": 32, "seq": 4096, "head_dim": 128, "causal": true}])"));
  std::vector<std::string> kernels;
  for (const auto& k : j.at("kernels")) {
    kernels.push_back(k.at("kernel"));
    CHECK(k.at("shape") == config::Json::parse(R"({"tokens": 4096, "hidden": 4096, "experts": 8, "topk": 2})"));
  }
  CHECK(kernels == std::vector<std::string>{"permute", "unpermute", "router_softmax_topk"});
  // The same request twice: byte-identical.
  const std::string first = test::slurp(req.string());
  REQUIRE(test::run_command(bin() + " calibrate --scenario mixtral-8x7b-h100-64 --request '" + req.string() + "'", root())
              .exit_code == 0);
  CHECK(test::slurp(req.string()) == first);
}

TEST_CASE("moesim calibrate refuses conflicting or missing arguments") {
  auto r = test::run_command(bin() + " calibrate --model mixtral-8x7b --scenario mixtral-8x7b-h100-64 --out x.json", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("give --scenario or --model, not both") != std::string::npos);
  r = test::run_command(bin() + " calibrate --model mixtral-8x7b", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("at --out: required") != std::string::npos);
  r = test::run_command(bin() + " calibrate --model no-such-model --request x.json", root());
  CHECK(r.exit_code == 2);
}
