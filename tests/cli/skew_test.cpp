#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;
namespace fs = std::filesystem;

// The built-in scenario redraws its popularity every step (per_step_variation): EPLB, placed from the
// previous step's window and judged on this step's draws, cannot know this step's hot experts and
// recovers little or nothing (docs/routing.md, "Expert placement"). With hot experts that stay hot
// (docs/scenarios/deepseek-v3-h100-256-ep64.json) it recovers nearly all of the penalty.
TEST_CASE("moesim skew: the step time grows with sigma; EPLB from the previous step's window") {
  const fs::path out = test::binary_dir() / ("skew-" + std::to_string(::getpid()) + ".json");
  const auto r = test::run_command(test::moesim_binary() + " skew custom-moe-lognormal-gb200 --sweep sigma=0:1.5:0.5 "
                                                           "--json '" + out.string() + "'",
                                   test::source_dir().string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("recovered") != std::string::npos);
  const auto j = nlohmann::json::parse(test::slurp(out.string()));
  fs::remove(out);
  CHECK(j.at("schema") == "moesim.skew/1");
  const auto& points = j.at("points");
  REQUIRE(points.size() == 4);
  CHECK(points[0].at("penalty").get<double>() == 0.0);
  CHECK(points[0].at("mean_imbalance").get<double>() == 1.0);
  for (std::size_t i = 1; i < points.size(); ++i) {
    CAPTURE(i);
    // Same seed, larger sigma: every draw is at least as skewed, so the step is at least as slow.
    CHECK(points[i].at("step_time_s").get<double>() >= points[i - 1].at("step_time_s").get<double>());
    CHECK(points[i].at("mean_imbalance").get<double>() > 1.0);
    CHECK(points[i].at("eplb_mean_imbalance").get<double>() > 1.2);
    CHECK(points[i].at("recovered").get<double>() < 0.5);
  }

  const fs::path dsv3 = test::binary_dir() / ("skew-dsv3-" + std::to_string(::getpid()) + ".json");
  const auto d = test::run_command(test::moesim_binary() + " skew docs/scenarios/deepseek-v3-h100-256-ep64.json "
                                                           "--sweep sigma=0.5:0.5:0.5 --json '" + dsv3.string() + "'",
                                   test::source_dir().string());
  REQUIRE(d.exit_code == 0);
  const auto k = nlohmann::json::parse(test::slurp(dsv3.string()));
  fs::remove(dsv3);
  const auto& p = k.at("points").at(0);
  CHECK(p.at("eplb_step_time_s").get<double>() < p.at("step_time_s").get<double>());
  CHECK(p.at("recovered").get<double>() > 0.9);
}

TEST_CASE("moesim skew refuses a bad sweep and a dense model") {
  auto r = test::run_command(test::moesim_binary() + " skew custom-moe-lognormal-gb200 --sweep sigma=1:0:0.5",
                             test::source_dir().string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("at --sweep: value sigma=1:0:0.5") != std::string::npos);
  r = test::run_command(test::moesim_binary() + " skew custom-moe-lognormal-gb200 --sweep tau=0:1:0.5",
                        test::source_dir().string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown skew parameter 'tau'") != std::string::npos);
}
