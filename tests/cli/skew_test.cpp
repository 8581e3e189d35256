#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;
namespace fs = std::filesystem;

TEST_CASE("moesim skew: the step time grows with sigma and the placement optimiser never makes it worse") {
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
    CHECK(points[i].at("eplb_step_time_s").get<double>() <= points[i].at("step_time_s").get<double>());
    CHECK(points[i].at("recovered").get<double>() > 0.5);
  }
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
