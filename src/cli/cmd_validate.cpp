// `moesim validate SCENARIO [--gpus N] [--layers K] [--microbatches M] [--measured RUN.json]
// [--predict] [--json OUT] [--html OUT]`: the training proxy of a scenario on one machine's GPUs, its prediction,
// and — given what the proxy runner measured — the comparison phase by phase (docs/validation.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/gpu_presence.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/measured_run_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "report/html_report.hpp"
#include "report/validation_json.hpp"
#include "validate/compare.hpp"
#include "validate/proxy.hpp"

namespace moesim::cli {
namespace {

struct Options {
  std::string scenario, measured, json_out, html_out;
  std::int64_t gpus = 1, layers = -1, microbatches = 2;  ///< layers -1: not given
  bool predict = false;
};

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string percent(double error, bool defined = true) {
  return defined ? fmt::format("{:+.1f}%", 100 * error) : std::string("n/a");
}

void print_prediction(const validate::ProxyPrediction& p) {
  std::printf("%-12s %12s\n", "phase", "predicted_s");
  for (const std::string& name : validation_phases()) std::printf("%-12s %12.6f\n", name.c_str(), p.phases_s.at(name));
  std::printf("%-12s %12.6f\n", "step", p.step_time_s);
  std::printf("%-12s %9.2f GiB\n", "peak memory", p.peak_memory_bytes / kGiB);
}

void print_comparison(const ValidationResult& v) {
  std::printf("measured   %s: %lld step(s) after %lld warm-up on %lld × %s\n", v.measured.source.c_str(),
              static_cast<long long>(v.measured.steps), static_cast<long long>(v.measured.warmup),
              static_cast<long long>(v.measured.gpus), v.measured.gpu.c_str());
  std::printf("%-12s %12s %12s %9s\n", "phase", "predicted_s", "measured_s", "error");
  for (const PhaseComparison& c : v.phases) {
    std::printf("%-12s %12.6f %12.6f %9s\n", c.phase.c_str(), c.predicted_s, c.measured_s,
                percent(c.error, c.error_defined).c_str());
  }
  std::printf("%-12s %12.6f %12.6f %9s\n", "step", v.predicted_step_time_s, v.measured.step_time_s,
              percent(v.step_time_error).c_str());
  std::printf("%-12s %9.2f GiB %9.2f GiB %9s\n", "peak memory", v.predicted_peak_memory_bytes / kGiB,
              v.measured.peak_memory_bytes / kGiB, percent(v.peak_memory_error).c_str());
  if (v.within_bounds) {
    std::printf("verdict    within the bounds (step time ±%.0f %%, peak memory ±%.0f %%)\n", 100 * v.step_time_bound,
                100 * v.peak_memory_bound);
    return;
  }
  const auto worst = std::find_if(v.phases.begin(), v.phases.end(),
                                  [&](const PhaseComparison& c) { return c.phase == v.worst_phase; });
  std::printf("verdict    OUTSIDE the bounds (step time ±%.0f %%, peak memory ±%.0f %%): %s diverged most "
              "(predicted %.6f s, measured %.6f s)\n",
              100 * v.step_time_bound, 100 * v.peak_memory_bound, v.worst_phase.c_str(), worst->predicted_s,
              worst->measured_s);
}

int run_validate(const Options& o) {
  const Scenario s = config::load_scenario_argument(o.scenario);
  validate::ProxyOptions po;
  po.gpus = o.gpus;
  if (o.layers != -1) po.layers = o.layers;
  po.microbatches = o.microbatches;
  const validate::ProxyPlan plan = validate::plan_proxy(s, po);
  std::printf("moesim validate · %s\n", s.name.c_str());
  for (const std::string& line : plan.notes) std::printf("proxy      %s\n", line.c_str());
  if (o.measured.empty() && !o.predict) {
    if (!cuda_device_present()) {
      std::fprintf(stderr,
                   "moesim validate: no CUDA device found (no /dev/nvidiactl, no /proc/driver/nvidia/gpus), so "
                   "nothing can be measured; give --measured RUN.json to compare a run measured elsewhere, or "
                   "--predict for the prediction alone; nothing written\n");
      return static_cast<int>(ExitCode::kBadInput);
    }
    std::fprintf(stderr,
                 "moesim validate: this build has no proxy runner (moesim-validate-run) yet, so it cannot measure "
                 "here; measure the proxy above with a runner and pass its file with --measured RUN.json "
                 "(docs/validation.md); nothing written\n");
    return static_cast<int>(ExitCode::kBadInput);
  }
  const validate::ProxyPrediction predicted = validate::predict_proxy(plan);
  if (o.measured.empty()) {
    print_prediction(predicted);
    return 0;
  }
  MeasuredRun run = config::load_measured_run(o.measured);
  ValidationResult v;
  try {
    v = validate::compare_run(s.name, plan, predicted, run);
  } catch (InputError& e) {
    throw e.in_file(o.measured);
  }
  print_comparison(v);
  const std::string text = report::validation_to_json_text(v);
  if (!o.json_out.empty()) write_file_atomically(o.json_out, text);
  if (!o.html_out.empty()) write_file_atomically(o.html_out, report::json_text_to_html(text, o.json_out, {}));
  return 0;
}

}  // namespace

void register_validate(CLI::App& app, Commands& commands) {
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "validate", "Compare a measured training proxy of a scenario with its prediction, phase by phase.");
  sub->add_option("scenario", opt->scenario, "scenario JSON file or built-in scenario name")->required();
  sub->add_option("--gpus", opt->gpus, "GPUs of this machine the proxy runs on")->capture_default_str();
  sub->add_option("--layers", opt->layers, "layers in the proxy's stack (default: the most that fit, up to 8)");
  sub->add_option("--microbatches", opt->microbatches, "micro-batches per proxy step")->capture_default_str();
  sub->add_option("--measured", opt->measured, "what the proxy runner measured (moesim.validation-measured/1)");
  sub->add_flag("--predict", opt->predict, "print the proxy's prediction per phase; measure nothing");
  sub->add_option("--json", opt->json_out, "write the comparison (moesim.validation/1); needs --measured");
  sub->add_option("--html", opt->html_out, "write the comparison as a self-contained HTML page; needs --measured");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      for (const auto& [flag, path] : {std::pair{"--json", opt->json_out}, std::pair{"--html", opt->html_out}}) {
        if (!path.empty() && opt->measured.empty()) {
          throw InputError(flag, path, "the comparison needs a measured run", "--measured RUN.json");
        }
      }
      return run_validate(*opt);
    });
  });
}

}  // namespace moesim::cli
