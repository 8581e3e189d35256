#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "../report/trace_format.hpp"
#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "config/builtin_scenarios.hpp"
#include "schedule/pipeline_schedule.hpp"

using namespace moesim;

TEST_CASE("simulate --trace: the Mixtral example's trace is valid Chrome Trace Event JSON with the 1F1B pattern") {
  const auto path = test::binary_dir() / ("mixtral-trace-" + std::to_string(::getpid()) + ".json");
  const auto r = test::run_command(test::moesim_binary() + " simulate mixtral-8x7b-h100-64 -q --trace '" +
                                       path.string() + "'",
                                   test::source_dir().string());
  REQUIRE(r.exit_code == 0);
  const nlohmann::json trace = nlohmann::json::parse(test::slurp(path.string()));
  std::filesystem::remove(path);
  const auto problems = test::validate_chrome_trace(trace);
  for (const auto& p : problems) MESSAGE(p);
  CHECK(problems.empty());

  // Stage 0 is pid 0; its compute track is tid 1. Collect the (micro-batch, chunk, pass) of its ops
  // in time order and compare with Megatron's interleaved 1F1B order for that rank.
  const Scenario s = *config::load_builtin_scenario("mixtral-8x7b-h100-64");
  std::vector<schedule::PipelinePass> seen;
  int flow_starts = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "s") ++flow_starts;
    if (e["ph"] != "X" || e["pid"] != 0 || e["tid"] != 1 || !e.contains("args")) continue;
    const auto& a = e["args"];
    if (!a.contains("microbatch") || !a.contains("pass")) continue;
    const schedule::PipelinePass p{a["microbatch"].get<int>(), a["chunk"].get<int>(), a["pass"] == "backward"};
    if (seen.empty() || !(seen.back() == p)) seen.push_back(p);
  }
  const auto expected = schedule::pipeline_order(0, s.parallel.pp, s.parallel.vpp, s.num_microbatches());
  REQUIRE(seen.size() == expected.size());
  CHECK(seen == expected);
  // Forward ops carry FLOPs and the pipeline sends are drawn as arrows.
  CHECK(flow_starts > 0);
}

TEST_CASE("--trace needs the simulation fidelity") {
  const auto r = test::run_command(test::moesim_binary() +
                                       " simulate mixtral-8x7b-h100-64 --fidelity estimate --trace never-written.json",
                                   test::binary_dir().string());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--trace") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(test::binary_dir() / "never-written.json"));
}
