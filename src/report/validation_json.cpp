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

std::string measured_run_to_json_text(const MeasuredRun& m) {
  using nlohmann::ordered_json;
  ordered_json phases = ordered_json::object();
  for (const std::string& name : validation_phases()) {
    const auto it = m.phases_s.find(name);
    phases[name] = it == m.phases_s.end() ? 0.0 : it->second;
  }
  const ordered_json out{{"schema", "moesim.validation-measured/1"},
                         {"source", m.source},
                         {"gpu", m.gpu},
                         {"gpus", m.gpus},
                         {"layers", m.layers},
                         {"steps", m.steps},
                         {"warmup", m.warmup},
                         {"step_time_s", m.step_time_s},
                         {"phases_s", phases},
                         {"peak_memory_bytes", m.peak_memory_bytes}};
  return out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
