#include "regress/suite.hpp"

#include "config/builtin_scenarios.hpp"
#include "predict/predict.hpp"
#include "scenario/fidelity.hpp"

namespace moesim::regress {

namespace fs = std::filesystem;

const std::vector<SuiteEntry>& regression_suite() {
  // The three examples plus reports/regress/*.json: dense Llama-3 on H100 and B200, MoE balanced on
  // H100 and H200, MoE under log-normal skew on GB200 and Zipf skew on B200, an MoE encoder on H200.
  static const std::vector<SuiteEntry> suite = [] {
    std::vector<SuiteEntry> s;
    for (const char* name : {"mixtral-8x7b-h100-64", "esm2-15b-moe-h200", "custom-moe-lognormal-gb200", "llama-3-8b-h100-16.json",
                             "llama-3-70b-b200-64.json", "mixtral-8x22b-h200-64.json", "qwen3-30b-a3b-b200-32-zipf.json"}) {
      for (const char* f : {"simulation", "estimate"}) s.push_back({name, f});
    }
    return s;
  }();
  return suite;
}

std::string point_id(const SuiteEntry& e) { return fs::path(e.scenario).stem().string() + "." + e.fidelity; }

RegressionPoint run_point(const SuiteEntry& e, const fs::path& suite_dir) {
  const bool file = fs::path(e.scenario).extension() == ".json";
  const Scenario s = config::load_scenario_argument(file ? (suite_dir / e.scenario).string() : e.scenario);
  const Result r = predict::predict(s, *value_of(kFidelityNames, e.fidelity)).result;  // the suite spells both
  RegressionPoint p;
  p.id = point_id(e);
  p.scenario = e.scenario;
  p.fidelity = e.fidelity;
  p.step_time_s = r.step_time_s;
  p.tokens_per_s = r.tokens_per_s;
  p.peak_bytes = r.memory.peak_bytes;
  return p;
}

std::vector<RegressionPoint> run_suite(const fs::path& suite_dir) {
  std::vector<RegressionPoint> now;
  for (const auto& e : regression_suite()) now.push_back(run_point(e, suite_dir));
  return now;
}

}  // namespace moesim::regress
