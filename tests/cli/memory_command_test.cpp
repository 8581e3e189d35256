#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;
namespace fs = std::filesystem;

TEST_CASE("moesim memory prints every stage and the same peak as the result's memory section") {
  const auto r = test::run_command(test::moesim_binary() + " memory mixtral-8x7b-h100-64", test::source_dir().string());
  REQUIRE(r.exit_code == 0);
  for (const char* column : {"weights", "grads", "optimizer", "activ", "nccl", "context", "frag", "peak", "fits"}) {
    CHECK_MESSAGE(r.out.find(column) != std::string::npos, column);
  }
  const auto pos = r.out.find("\npeak ");
  REQUIRE(pos != std::string::npos);
  double peak_gib = 0;
  long long stage = -1;
  REQUIRE(std::sscanf(r.out.c_str() + pos, "\npeak %lf GiB on pipeline stage %lld", &peak_gib, &stage) == 2);
  CHECK(stage >= 0);

  const fs::path out = test::binary_dir() / ("memory-" + std::to_string(::getpid()) + ".json");
  const auto sim = test::run_command(test::moesim_binary() + " simulate mixtral-8x7b-h100-64 -q --json '" +
                                         out.string() + "'",
                                     test::source_dir().string());
  REQUIRE(sim.exit_code == 0);
  const auto j = nlohmann::json::parse(test::slurp(out.string()));
  fs::remove(out);
  const double result_peak_gib = j.at("memory").at("peak_bytes").get<double>() / (1024.0 * 1024.0 * 1024.0);
  CHECK(peak_gib == doctest::Approx(result_peak_gib).epsilon(0.001).scale(0));
}

TEST_CASE("moesim memory: a heavier expert load raises the peak of an MoE layout") {
  auto peak = [](const std::string& extra) {
    const auto r = test::run_command(test::moesim_binary() + " memory mixtral-8x7b-h100-64" + extra,
                                     test::source_dir().string());
    REQUIRE(r.exit_code == 0);
    double gib = 0;
    std::sscanf(r.out.c_str() + r.out.find("\npeak "), "\npeak %lf", &gib);
    return gib;
  };
  CHECK(peak(" --expert-load 2") > peak(""));
  const auto bad = test::run_command(test::moesim_binary() + " memory mixtral-8x7b-h100-64 --expert-load 0.5",
                                     test::source_dir().string());
  CHECK(bad.exit_code == 2);
}
