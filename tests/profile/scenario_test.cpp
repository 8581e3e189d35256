// Whole training steps with a calibration profile (docs/profile.md): each checked-in published profile
// changes the answer from the datasheet one, the result's warnings say which kernels and collectives
// the profile answered and which fell back, both fidelities read it, and the result is deterministic.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "config/scenario_loader.hpp"
#include "program/profile_warnings.hpp"
#include "estimate/step_estimator.hpp"
#include "report/result_json.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

namespace {

config::Json scenario_json(const std::string& preset, std::int64_t gpus, const std::string& profile) {
  config::Json system{{"preset", preset}, {"gpus", gpus}};
  if (!profile.empty()) system["profile"] = profile;
  return {{"name", "profile test"},
          {"model", "mixtral-8x7b"},
          {"system", system},
          {"training", {{"seq_length", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 64}}},
          {"parallel", {{"tp", 8}, {"pp", 2}, {"ep", 8}, {"etp", 1}, {"sequence_parallel", false}}}};
}

Scenario load(const config::Json& j) {
  return config::parse_scenario(j, "inline.json", test::source_dir() / "tests/profile");
}

bool has_warning(const Result& r, const std::string& part) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

std::string warnings_text(const Result& r) {
  std::string s;
  for (const auto& w : r.warnings) s += w + "\n";
  return s;
}

}  // namespace

TEST_CASE("every published profile changes the estimate of a scenario on its GPU and says what it answered") {
  struct Case {
    const char* preset;
    const char* profile;
    std::int64_t gpus;
  };
  for (const Case& c : {Case{"dgx-a100", "a100-published", 64}, Case{"hgx-h100", "h100-published", 64},
                        Case{"dgx-b200", "b200-published", 64}, Case{"gb200-nvl72", "gb200-published", 64}}) {
    CAPTURE(c.profile);
    const Result datasheet = estimate::estimate_step(load(scenario_json(c.preset, c.gpus, "")));
    const Result calibrated = estimate::estimate_step(load(scenario_json(c.preset, c.gpus, c.profile)));
    CHECK(calibrated.step_time_s != datasheet.step_time_s);
    CHECK(has_warning(datasheet, "kernel times from datasheet roofline"));
    CHECK_FALSE(has_warning(calibrated, "kernel times from datasheet roofline"));
    CHECK(has_warning(calibrated, std::string("calibration profile ") + c.profile + ": published figures"));
    INFO(warnings_text(calibrated));
    CHECK(has_warning(calibrated, std::string("profile ") + c.profile + ": gemm bf16 interpolated ("));
    // The published profiles have no kernels, attention or grouped tables: those fall back.
    CHECK(has_warning(calibrated, "memory-bound kernels fell back to roofline ("));
    CHECK(has_warning(calibrated, "flash attention forward fell back to roofline ("));
    CHECK(has_warning(calibrated, "grouped_gemm bf16 grouped_batched (moe.grouped_gemm true) fell back to roofline ("));
  }
}

TEST_CASE("the H100 profile's all-reduce sweep prices TP all-reduces inside a node; collectives across nodes keep "
          "the model") {
  const Result r = estimate::estimate_step(load(scenario_json("hgx-h100", 64, "h100-published")));
  INFO(warnings_text(r));
  CHECK(has_warning(r, "all_reduce over 8 ranks interpolated ("));
  CHECK(has_warning(r, "from the model ("));
  CHECK(has_warning(r, "the group spans NVLink domains and the profile measures one node"));
}

TEST_CASE("a measured-style profile with every table: both fidelities interpolate in each and report it") {
  const config::Json j = scenario_json("hgx-h200", 16, "data/h200-synthetic.json");
  const Scenario s = load(j);
  const Result datasheet = estimate::estimate_step(load(scenario_json("hgx-h200", 16, "")));
  const Result est = estimate::estimate_step(s);
  const Result sim = sim::simulate_step(s).result;
  CHECK(est.step_time_s != datasheet.step_time_s);
  for (const Result* r : {&est, &sim}) {
    INFO(warnings_text(*r));
    CHECK(has_warning(*r, "calibration profile data/h200-synthetic.json: measured figures for h200-sxm"));
    CHECK(has_warning(*r, "gemm bf16 interpolated ("));
    CHECK(has_warning(*r, "grouped_gemm bf16 grouped_batched (moe.grouped_gemm true) interpolated ("));
    CHECK(has_warning(*r, "weight-gradient groups take their forward problem's ratio"));
    CHECK(has_warning(*r, "copy (memory-bound, by bytes) interpolated ("));
    CHECK(has_warning(*r, "permute (memory-bound, by bytes) interpolated ("));
    CHECK(has_warning(*r, "router_softmax_topk (memory-bound, by bytes) interpolated ("));
    CHECK(has_warning(*r, "flash attention forward interpolated ("));
    CHECK(has_warning(*r, "flash attention backward interpolated ("));
    CHECK(has_warning(*r, "all_reduce over 8 ranks interpolated ("));
    CHECK(has_warning(*r, "all_to_all over 8 ranks interpolated ("));
  }
  // FP8: the synthetic profile has no FP8 GEMM rows, so those fall back, while the casts use cast_fp8.
  config::Json fp8 = j;
  fp8["precision"] = "fp8";
  const Result r8 = estimate::estimate_step(load(fp8));
  INFO(warnings_text(r8));
  CHECK(has_warning(r8, "gemm fp8 fell back to roofline ("));
  CHECK(has_warning(r8, ", no fp8 rows)"));
  CHECK(has_warning(r8, "cast_fp8 (memory-bound, by bytes) interpolated ("));
}

TEST_CASE("a result with a profile is deterministic, and the simulation agrees with itself run twice") {
  const Scenario s = load(scenario_json("hgx-h200", 16, "data/h200-synthetic.json"));
  CHECK(report::result_to_json_text(estimate::estimate_step(s)) == report::result_to_json_text(estimate::estimate_step(s)));
  const Scenario again = load(scenario_json("hgx-h200", 16, "data/h200-synthetic.json"));  // a fresh load: a new cache
  CHECK(report::result_to_json_text(sim::simulate_step(s).result) ==
        report::result_to_json_text(sim::simulate_step(again).result));
}

TEST_CASE("a skewed simulation re-costs the expert GEMMs over ragged loads from the profile's grouped rows") {
  config::Json j = scenario_json("hgx-h200", 16, "data/h200-synthetic.json");
  j["moe"] = {{"routing", {{"distribution", "zipf"}, {"s", 1.0}}}};
  const Result r = sim::simulate_step(load(j)).result;
  INFO(warnings_text(r));
  CHECK(r.step_time_s > 0);
  CHECK(has_warning(r, "grouped_gemm bf16 grouped_batched (moe.grouped_gemm true) interpolated ("));
}

TEST_CASE("bytes in the warnings are powers of 1024") {
  CHECK(program::format_bytes(1024) == "1 KiB");
  CHECK(program::format_bytes(8.0 * 1024 * 1024 * 1024) == "8 GiB");
  CHECK(program::format_bytes(1536) == "1.5 KiB");
  CHECK(program::format_bytes(300) == "300 B");
}
