#include "report/validation_json.hpp"

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string validation_to_json_text(const ValidationResult& v) {
  using nlohmann::json;
  json measured_phases = json::object();
  for (const auto& [name, seconds] : v.measured.phases_s) measured_phases[name] = seconds;
  json phases = json::array();
  for (const PhaseComparison& c : v.phases) {
    phases.push_back({{"phase", c.phase},
                      {"predicted_s", c.predicted_s},
                      {"measured_s", c.measured_s},
                      {"error", c.error_defined ? json(c.error) : json(nullptr)}});
  }
  const json out{
      {"schema", "moesim.validation/1"},
      {"scenario", v.scenario},
      {"proxy", v.proxy},
      {"measured",
       {{"source", v.measured.source},
        {"gpu", v.measured.gpu},
        {"gpus", v.measured.gpus},
        {"layers", v.measured.layers},
        {"steps", v.measured.steps},
        {"warmup", v.measured.warmup},
        {"step_time_s", v.measured.step_time_s},
        {"phases_s", measured_phases},
        {"peak_memory_bytes", v.measured.peak_memory_bytes}}},
      {"predicted", {{"step_time_s", v.predicted_step_time_s}, {"peak_memory_bytes", v.predicted_peak_memory_bytes}}},
      {"phases", phases},
      {"step_time_error", v.step_time_error},
      {"peak_memory_error", v.peak_memory_error},
      {"worst_phase", v.worst_phase},
      {"bounds", {{"step_time", v.step_time_bound}, {"peak_memory", v.peak_memory_bound}}},
      {"within_bounds", v.within_bounds}};
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
