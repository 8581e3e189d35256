#include "report/baseline_json.hpp"

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string baseline_to_json_text(const RegressionPoint& p) {
  // The version is deliberately left out: a release that moves no prediction leaves every file alone.
  const nlohmann::json j{{"schema", kBaselineSchema},     {"scenario", p.scenario},         {"fidelity", p.fidelity},
                         {"step_time_s", p.step_time_s}, {"tokens_per_s", p.tokens_per_s}, {"peak_bytes", p.peak_bytes}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
