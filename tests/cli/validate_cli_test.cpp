// `moesim validate` (docs/validation.md): without a GPU it exits 2 with the message and writes
// nothing (issue 10, must-show 1); with a measured run it compares and writes moesim.validation/1.
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
