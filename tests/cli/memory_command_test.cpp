#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

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

TEST_CASE("moesim memory names where each stage peaks, and --timeline shows the peak stage's timeline") {
  const auto r = test::run_command(test::moesim_binary() + " memory mixtral-8x7b-h100-64 --timeline",
                                   test::source_dir().string());
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("per-op timeline peak of each stage") != std::string::npos);
  const auto pos = r.out.find("\npeak ");
  REQUIRE(pos != std::string::npos);
  const auto line = r.out.substr(pos + 1, r.out.find('\n', pos + 1) - pos - 1);
  CHECK(line.find("; at forward of micro-batch ") != std::string::npos);
  CHECK(r.out.find("timeline of pipeline stage ") != std::string::npos);
  CHECK(r.out.find("<- peak") != std::string::npos);
}

TEST_CASE("moesim memory --timeline-csv writes every op and ends at the baseline") {
  const fs::path out = test::binary_dir() / ("timeline-" + std::to_string(::getpid()) + ".csv");
  const auto r = test::run_command(test::moesim_binary() + " memory mixtral-8x7b-h100-64 --stage 3 --timeline-csv '" +
                                       out.string() + "'",
                                   test::source_dir().string());
  REQUIRE(r.exit_code == 0);
  const std::string csv = test::slurp(out.string());
  fs::remove(out);
  REQUIRE(csv.rfind("pass,microbatch,chunk,direction,op,layer,moe,running_bytes,bytes\n", 0) == 0);
  // After the last op (a backward) only the baseline is left: the least "bytes" of the whole step.
  std::vector<double> bytes;
  std::string last_line;
  std::size_t at = csv.find('\n') + 1;
  while (at < csv.size()) {
    const std::size_t end = csv.find('\n', at);
    last_line = csv.substr(at, end - at);
    bytes.push_back(std::stod(last_line.substr(last_line.rfind(',') + 1)));
    at = end + 1;
  }
  CHECK(bytes.size() > 100);
  CHECK(last_line.find(",backward,") != std::string::npos);
  CHECK(bytes.back() == *std::min_element(bytes.begin(), bytes.end()));
  CHECK(bytes.back() < bytes.front());
  const auto bad = test::run_command(test::moesim_binary() + " memory mixtral-8x7b-h100-64 --stage 4 --timeline",
                                     test::source_dir().string());
  CHECK(bad.exit_code == 2);
}
