#include "config/measured_run_loader.hpp"

#include <algorithm>

#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::config {

MeasuredRun load_measured_run(const std::string& path) {
  const Json j = load_json_file(path);
  try {
    const ObjectReader r(j, "", {"schema", "source", "gpu", "gpus", "layers", "steps", "warmup", "step_time_s",
                                 "phases_s", "peak_memory_bytes"});
    const std::string schema = r.require_string("schema");
    if (schema != "moesim.validation-measured/1") {
      throw InputError("/schema", schema, "not a measured validation run", "moesim.validation-measured/1");
    }
    MeasuredRun m;
    m.source = r.require_nonempty_string("source", "must say what produced the measurement (runner, version, command)");
    m.gpu = r.require_nonempty_string("gpu", "must name the machine's GPU preset (e.g. h200-sxm)");
    m.gpus = r.require_int("gpus", {1, 72});
    m.layers = r.require_int("layers", {1, 1000});
    m.steps = r.require_int("steps", {1, 1000000});
    m.warmup = r.require_int("warmup", {0, 1000000});
    m.step_time_s = r.require_number("step_time_s", {0, 1e6, true});
    m.peak_memory_bytes = r.require_number("peak_memory_bytes", {0, 1e15, true});
    const std::vector<std::string>& names = validation_phases();
    const Json* phase_object = r.get("phases_s");
    if (!phase_object) throw InputError("/phases_s", "", "required: seconds per step of each phase", join(names));
    const ObjectReader phases(*phase_object, "/phases_s", names);
    for (const std::string& name : names) m.phases_s[name] = phases.get_number(name, 0.0, {0, 1e6});
    return m;
  } catch (InputError& e) {
    throw e.in_file(path);
  }
}

}  // namespace moesim::config
