// config/baseline_loader: a folder of `moesim regress` baselines read in file-name order, strictly.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "../test_paths.hpp"
#include "config/baseline_loader.hpp"
#include "core/error.hpp"

using namespace moesim;
namespace fs = std::filesystem;

TEST_CASE("load_baselines reads every *.json of a folder in name order; none for a missing folder") {
  const fs::path dir = test::binary_dir() / "baseline-loader-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto write = [&](const char* name, const char* scenario) {
    std::ofstream(dir / name) << R"({"schema": "moesim.baseline/1", "scenario": ")" << scenario
                              << R"(", "fidelity": "estimate", "step_time_s": 1.5, "tokens_per_s": 100, "peak_bytes": 1e9})";
  };
  write("b.estimate.json", "b");
  write("a.estimate.json", "a");
  std::ofstream(dir / "notes.txt") << "not a baseline";
  const auto points = config::load_baselines(dir);
  REQUIRE(points.size() == 2);
  CHECK(points[0].id == "a.estimate");
  CHECK(points[0].scenario == "a");
  CHECK(points[1].id == "b.estimate");
  CHECK(points[1].step_time_s == 1.5);
  CHECK(config::load_baselines(dir / "missing").empty());
  std::ofstream(dir / "c.estimate.json") << R"({"schema": "moesim.result/1"})";
  CHECK_THROWS_AS((void)config::load_baselines(dir), InputError);
  fs::remove_all(dir);
}
