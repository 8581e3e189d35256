// `moesim validate` (docs/validation.md): without a GPU it exits 2 with the message and writes
// nothing (issue 10, must-show 1); with a measured run it compares and writes moesim.validation/1;
// --workload writes what the proxy runner runs, GPU or not.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "cli/gpu_presence.hpp"
#include "cli/validate_runner.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/json_reader.hpp"
#include "config/validation_workload_loader.hpp"
#include "core/error.hpp"
#include "validate/proxy.hpp"
#include "validate/workload.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {
std::string bin() { return test::moesim_binary(); }
std::string root() { return test::source_dir().string(); }
bool gpu_present() { return cli::cuda_device_present(); }
}  // namespace

TEST_CASE("without a GPU, moesim validate exits 2 with 'no CUDA device found' and writes nothing") {
  if (gpu_present()) {
    MESSAGE("skipped: a CUDA device is present");
    return;
  }
  const auto r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --gpus 8 --layers 2", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("moesim validate: no CUDA device found"));
  CHECK(r.err.find("nothing written") != std::string::npos);
}

TEST_CASE("moesim validate --measured compares a run phase by phase and writes moesim.validation/1") {
  const fs::path out = test::binary_dir() / "validate-test.json";
  const fs::path html = test::binary_dir() / "validate-test.html";
  fs::remove(out);
  fs::remove(html);
  const auto r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --gpus 8 --layers 2 --measured "
                                   "tests/data/validation-measured-example.json --json '" + out.string() +
                                   "' --html '" + html.string() + "'",
                                   root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("proxy      a stack of 2 MoE layer(s)") != std::string::npos);
  CHECK(r.out.find("verdict    ") != std::string::npos);
  const config::Json j = config::load_json_file(out.string());
  CHECK(j.at("schema") == "moesim.validation/1");
  CHECK(j.at("phases").size() == 6);
  CHECK(j.at("measured").at("layers") == 2);
  CHECK(j.at("predicted").at("step_time_s").get<double>() > 0);
  REQUIRE(fs::exists(html));
  CHECK(fs::file_size(html) > 100000);  // the page inlines ECharts
}

TEST_CASE("moesim validate refuses a run of another proxy, and --json without a run, with exit 2") {
  auto r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --gpus 8 --layers 3 --measured "
                             "tests/data/validation-measured-example.json", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("validation-measured-example.json") != std::string::npos);
  CHECK(r.err.find("/layers") != std::string::npos);
  r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --json x.json", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("needs a measured run") != std::string::npos);
  r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --gpus 16 --predict", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("1 to 8") != std::string::npos);
  r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --layers 0 --predict", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--layers") != std::string::npos);
  CHECK(r.err.find("1 to 32") != std::string::npos);
}

TEST_CASE("moesim validate --workload writes what the runner runs, without a GPU, and it loads") {
  const fs::path out = test::binary_dir() / "validate-workload-test.json";
  fs::remove(out);
  auto r = test::run_command(bin() + " validate custom-moe-lognormal-gb200 --gpus 4 --layers 2 --experts 32 "
                             "--steps 7 --warmup 2 --workload '" + out.string() + "'",
                             root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("proxy      32 of the model's 64 routed experts") != std::string::npos);
  CHECK(r.out.find("moesim-validate-run --workload") != std::string::npos);
  const ValidationWorkload w = config::load_validation_workload(out.string());
  CHECK(w.gpus == 4);
  CHECK(w.ep == 4);
  CHECK(w.layers == 2);
  CHECK(w.experts == 32);
  CHECK(w.topk == 6);
  CHECK(w.steps == 7);
  CHECK(w.warmup == 2);
  CHECK(w.routed_copies.size() == 2);
  // What the runner cannot run is refused and nothing is written.
  fs::remove(out);
  r = test::run_command(bin() + " validate docs/scenarios/llama-3-70b-h100-published-profile.json --gpus 8 "
                        "--workload '" + out.string() + "'",
                        root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/parallel/tp") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  r = test::run_command(bin() + " validate custom-moe-lognormal-gb200 --gpus 4 --experts 30 --workload '" +
                        out.string() + "'", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--experts") != std::string::npos);
  CHECK(r.err.find("multiples of 4 from 8 to 64") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
  r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --steps 0 --predict", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--steps") != std::string::npos);
  r = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --workload w.json --json x.json", root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("needs a measured run") != std::string::npos);
}

TEST_CASE("the runner's smoke stacks give workloads, and the checked-in one is today's") {
  // device_check.sh runs both under compute-sanitizer; the runner's no-GPU test reads the GQA one
  // from calibrate/tests/data, which must stay what moesim writes (regenerate it with this command).
  for (const std::string smoke : {"gqa", "mla"}) {
    const fs::path out = test::binary_dir() / ("smoke-" + smoke + "-workload.json");
    const auto r = test::run_command(bin() + " validate calibrate/tests/smoke/" + smoke +
                                         "-h200.json --gpus 1 --steps 1 --warmup 1 --workload '" + out.string() + "'",
                                     root());
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const ValidationWorkload w = config::load_validation_workload(out.string());
    CHECK(w.layers == 2);
    CHECK((smoke == "mla") == (w.kv_lora_rank > 0));
    CHECK((smoke == "mla") == (w.recompute == "full"));
    if (smoke == "gqa") {
      CHECK(test::slurp(out.string()) == test::slurp(root() + "/calibrate/tests/data/smoke-gqa-workload.json"));
    }
  }
}

TEST_CASE("moesim validate --calibration-request writes the proxy's kernel shapes, without a GPU") {
  const fs::path out = test::binary_dir() / "validate-request-test.json";
  fs::remove(out);
  // The proxy of DeepSeek-V3 with 32 experts on one GPU: its expert GEMMs are the proxy's (EP 1, 32
  // experts), not the scenario's, and its multi-latent attention projections are among the GEMMs.
  const auto r = test::run_command(bin() + " validate docs/scenarios/validation/deepseek-v3-h200.json --gpus 1 "
                                   "--layers 1 --experts 32 --calibration-request '" + out.string() + "'",
                                   root());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("moesim-calibrate --request") != std::string::npos);
  const std::string text = test::slurp(out.string());
  CHECK(text.find("\"schema\": \"moesim.calibration-request/1\"") != std::string::npos);
  CHECK(text.find("\"n\": 24576") != std::string::npos);  // q up-projection: 128 heads x 192
  CHECK(text.find("\"n\": 576") != std::string::npos);    // kv down-projection: 512 latent + 64 rotary
  CHECK(text.find("\"grouped_gemm\"") != std::string::npos);
  CHECK(text.find("\"attention\"") != std::string::npos);
  // A request is not a comparison: --json with it alone is refused.
  const auto refused = test::run_command(bin() + " validate mixtral-8x7b-h100-64 --calibration-request r.json "
                                         "--json x.json", root());
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("needs a measured run") != std::string::npos);
}

TEST_CASE("without a GPU, measuring with the new options still exits 2 and leaves no temporary behind") {
  if (gpu_present()) {
    MESSAGE("skipped: a CUDA device is present");
    return;
  }
  const auto r = test::run_command(bin() + " validate custom-moe-lognormal-gb200 --gpus 4 --layers 2 --experts 32 "
                                   "--steps 3 --warmup 1",
                                   root());
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("moesim validate: no CUDA device found"));
  CHECK(r.err.find("--workload") != std::string::npos);
  CHECK(r.err.find("nothing written") != std::string::npos);
}

namespace {
/// An executable shell script standing in for moesim-validate-run.
fs::path fake_runner(const std::string& name, const std::string& body) {
  const fs::path p = test::binary_dir() / name;
  std::ofstream(p) << "#!/bin/sh\n" << body;
  fs::permissions(p, fs::perms::owner_all, fs::perm_options::replace);
  return p;
}
}  // namespace

TEST_CASE("the runner hand-off: workload in, measured file read back, failures passed through") {
  validate::ProxyOptions o;
  o.gpus = 8;
  o.layers = 2;
  const ValidationWorkload w = validate::make_workload(
      validate::plan_proxy(config::load_scenario_argument("mixtral-8x7b-h100-64"), o), 4, 1);
  const fs::path seen = test::binary_dir() / "fake-runner-seen-workload.json";
  fs::remove(seen);
  // Keeps a copy of the workload it was given and writes the example measurement.
  const fs::path good = fake_runner("fake-validate-run-good",
                                    "while [ $# -gt 0 ]; do case \"$1\" in --workload) wl=$2;; --out) out=$2;; "
                                    "--log) log=$2;; esac; shift; done\n"
                                    "[ -n \"$log\" ] || exit 2\n"
                                    "cp \"$wl\" '" + seen.string() + "' && cp '" + root() +
                                    "/tests/data/validation-measured-example.json' \"$out\"\n");
  // The private folders go under a TMPDIR of the test's own, so that what is kept can be checked.
  const fs::path tmp = test::binary_dir() / "validate-runner-tmp";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const auto folders = [&] { return std::distance(fs::directory_iterator(tmp), fs::directory_iterator()); };
  MeasuredRun run;
  REQUIRE(cli::run_validation_runner(good, w, run) == 0);
  CHECK(folders() == 0);  // removed after a good run
  CHECK(run.gpus == 8);
  CHECK(run.layers == 2);
  const ValidationWorkload back = config::load_validation_workload(seen.string());
  CHECK(back.steps == 4);
  CHECK(back.warmup == 1);
  CHECK(back.routed_copies == w.routed_copies);
  // A failing runner's exit code comes back; nothing is read.
  MeasuredRun untouched;
  CHECK(cli::run_validation_runner(fake_runner("fake-validate-run-fails", "exit 1\n"), w, untouched) == 1);
  CHECK(untouched.gpus == 0);
  REQUIRE(folders() == 1);  // kept for a look, with the workload the runner was given
  CHECK(fs::exists(fs::directory_iterator(tmp)->path() / "workload.json"));
  CHECK(cli::run_validation_runner(fake_runner("fake-validate-run-refuses", "exit 2\n"), w, untouched) == 2);
  // Exit 0 with a malformed measured file is refused by the strict loader.
  CHECK_THROWS_AS((void)cli::run_validation_runner(
                      fake_runner("fake-validate-run-garbage",
                                  "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
                                  "echo '{\"schema\": \"moesim.validation-measured/1\"}' > \"$out\"\n"),
                      w, untouched),
                  InputError);
  CHECK(folders() == 3);
  if (old_tmpdir) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  fs::remove_all(tmp);
}
