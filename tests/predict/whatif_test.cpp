// whatif.kernel_speedup end to end (issue 31, must-show 1): a faster expert MLP lowers the Mixtral
// example's step and compute time, a faster dispatch lowers DeepSeek-V3 EP64's ep_comm, both at each
// fidelity with the prediction as asked beside it; an empty kernel_speedup changes nothing.
#include <doctest/doctest.h>

#include <string>

#include "../test_paths.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"
#include "predict/predict.hpp"
#include "report/result_json.hpp"

using namespace moesim;

namespace {

Scenario with_speedup(Scenario s, OpClass c, double factor) {
  s.whatif.kernel_speedup[static_cast<std::size_t>(c)] = factor;
  return s;
}

Scenario mixtral() { return *config::load_builtin_scenario("mixtral-8x7b-h100-64"); }

Scenario deepseek_ep64() {
  return config::load_scenario_file((test::source_dir() / "docs" / "scenarios" / "deepseek-v3-h100-256-ep64.json").string());
}

}  // namespace

TEST_CASE("Mixtral: a 2x faster expert MLP lowers the step and the compute time, the baseline beside it") {
  const Scenario base = mixtral();
  for (const Fidelity f : {Fidelity::kEstimate, Fidelity::kSimulation}) {
    CAPTURE(to_string(f));
    const Result b = predict::predict(base, f).result;
    Result w = predict::predict(with_speedup(base, OpClass::kExpertMlp, 2.0), f).result;
    CHECK_FALSE(w.whatif_baseline.present);  // only where a result is reported
    predict::add_whatif_baseline(w);
    MESSAGE(to_string(f), ": step ", b.step_time_s, " -> ", w.step_time_s, " s, compute ", b.breakdown.compute, " -> ",
            w.breakdown.compute, " s");
    CHECK(w.step_time_s < b.step_time_s);
    CHECK(w.breakdown.compute < b.breakdown.compute);
    // The other categories' kernels are untouched: the EP and TP traffic stay.
    CHECK(w.breakdown.ep_comm == doctest::Approx(b.breakdown.ep_comm).epsilon(0.02));
    CHECK_FALSE(b.whatif_baseline.present);
    REQUIRE(w.whatif_baseline.present);
    CHECK(w.whatif_baseline.step_time_s == b.step_time_s);
    CHECK(w.whatif_baseline.breakdown.compute == b.breakdown.compute);
    CHECK(w.whatif_baseline.tokens_per_s_per_gpu == b.tokens_per_s_per_gpu);
  }
}

TEST_CASE("DeepSeek-V3 EP64: a 2x faster dispatch lowers ep_comm") {
  const Scenario base = deepseek_ep64();
  for (const Fidelity f : {Fidelity::kEstimate, Fidelity::kSimulation}) {
    CAPTURE(to_string(f));
    const Result b = predict::predict(base, f).result;
    const Result w = predict::predict(with_speedup(base, OpClass::kDispatch, 2.0), f).result;
    MESSAGE(to_string(f), ": ep_comm ", b.breakdown.ep_comm, " -> ", w.breakdown.ep_comm, " s, step ", b.step_time_s,
            " -> ", w.step_time_s, " s");
    CHECK(w.breakdown.ep_comm < b.breakdown.ep_comm);
    // Half the dispatch, the combine as before: ep_comm loses between a quarter and a half.
    CHECK(w.breakdown.ep_comm > 0.5 * b.breakdown.ep_comm);
    CHECK(w.breakdown.ep_comm < 0.8 * b.breakdown.ep_comm);
    CHECK(w.step_time_s < b.step_time_s);
    CHECK(w.breakdown.compute == doctest::Approx(b.breakdown.compute));
  }
}

TEST_CASE("an empty kernel_speedup, or every factor 1, changes nothing: the same JSON byte for byte") {
  const std::string text(*config::builtin_scenario_text("mixtral-8x7b-h100-64"));
  auto json = nlohmann::json::parse(text);
  const Scenario plain = config::parse_scenario(json, "mixtral", test::source_dir());
  json["whatif"] = {{"kernel_speedup", nlohmann::json::object()}};
  const Scenario empty = config::parse_scenario(json, "mixtral", test::source_dir());
  json["whatif"]["kernel_speedup"] = {{"expert_mlp", 1.0}, {"dispatch", 1}};
  const Scenario ones = config::parse_scenario(json, "mixtral", test::source_dir());
  const auto reported = [](const Scenario& s, Fidelity f) {
    Result r = predict::predict(s, f).result;
    predict::add_whatif_baseline(r);
    return report::result_to_json_text(r);
  };
  for (const Fidelity f : {Fidelity::kEstimate, Fidelity::kSimulation}) {
    const std::string a = reported(plain, f);
    CHECK(reported(empty, f) == a);
    CHECK(reported(ones, f) == a);
  }
}

TEST_CASE("a kernel_speedup class that does not exist, or a factor out of range, is refused") {
  const std::string text(*config::builtin_scenario_text("mixtral-8x7b-h100-64"));
  auto json = nlohmann::json::parse(text);
  json["whatif"] = {{"kernel_speedup", {{"fused_mlp", 2.0}}}};
  CHECK_THROWS_AS((void)config::parse_scenario(json, "mixtral", test::source_dir()), InputError);
  json["whatif"] = {{"kernel_speedup", {{"expert_mlp", 0.0}}}};
  CHECK_THROWS_AS((void)config::parse_scenario(json, "mixtral", test::source_dir()), InputError);
}
