#include "report/skew_json.hpp"

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string skew_to_json_text(const SkewSweep& sweep) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SkewPoint& p : sweep.points) {
    rows.push_back({{sweep.parameter, p.value},
                    {"mean_imbalance", p.mean_imbalance},
                    {"max_imbalance", p.max_imbalance},
                    {"step_time_s", p.step_time_s},
                    {"penalty", p.penalty},
                    {"eplb_mean_imbalance", p.eplb_mean_imbalance},
                    {"eplb_step_time_s", p.eplb_step_time_s},
                    {"eplb_penalty", p.eplb_penalty},
                    {"recovered", p.recovered}});
  }
  const nlohmann::json out{{"schema", "moesim.skew/1"},
                           {"scenario", sweep.scenario},
                           {"parameter", sweep.parameter},
                           {"redundant_experts_per_rank", sweep.redundant_experts_per_rank},
                           {"balanced_step_time_s", sweep.balanced_step_time_s},
                           {"points", rows}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
