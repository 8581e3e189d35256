#include "config/baseline_loader.hpp"

#include <algorithm>
#include <filesystem>

#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace moesim::config {

RegressionPoint load_baseline(const std::string& path) {
  const Json j = load_json_file(path);
  try {
    const ObjectReader r(j, "", {"schema", "scenario", "fidelity", "step_time_s", "tokens_per_s", "peak_bytes"});
    if (r.require_string("schema") != "moesim.baseline/1") {
      throw InputError("/schema", r.require_string("schema"), "not a moesim regress baseline", "moesim.baseline/1");
    }
    RegressionPoint p;
    p.id = std::filesystem::path(path).stem().string();
    p.scenario = r.require_string("scenario");
    p.fidelity = r.get_enum("fidelity", "simulation", {"simulation", "estimate"});
    p.step_time_s = r.require_number("step_time_s", {0, 1e12, true});
    p.tokens_per_s = r.require_number("tokens_per_s", {0, 1e18, true});
    p.peak_bytes = r.require_number("peak_bytes", {0, 1e18, true});
    return p;
  } catch (InputError& e) {
    throw e.in_file(path);
  }
}

std::vector<RegressionPoint> load_baselines(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  if (fs::is_directory(dir)) {
    for (const auto& f : fs::directory_iterator(dir)) {
      if (f.path().extension() == ".json") files.push_back(f.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<RegressionPoint> out;
  for (const auto& f : files) out.push_back(load_baseline(f.string()));
  return out;
}

}  // namespace moesim::config
