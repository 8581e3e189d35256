// `moesim validate SCENARIO [--gpus N] [--layers K] [--microbatches M] [--experts E] [--steps S]
// [--warmup W] [--measured RUN.json | --predict | --workload OUT] [--json OUT] [--html OUT]`: the training
// proxy of a scenario on one machine's GPUs, its prediction, and — given what the proxy runner measured,
// here (`moesim-validate-run` beside this binary, on a CUDA device) or elsewhere (--measured) — the
// comparison phase by phase (docs/validation.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/gpu_presence.hpp"
#include "cli/scenario_errors.hpp"
#include "cli/sibling_binary.hpp"
#include "cli/validate_runner.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/measured_run_loader.hpp"
#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "program/calibration_request.hpp"
#include "report/html_report.hpp"
#include "report/calibration_request_json.hpp"
#include "report/validation_json.hpp"
#include "report/validation_workload_json.hpp"
#include "validate/compare.hpp"
#include "validate/proxy.hpp"
#include "validate/workload.hpp"

namespace moesim::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  std::string scenario, measured, json_out, html_out, workload_out, request_out;
  std::int64_t gpus = 1, layers = -1, microbatches = 2;  ///< layers -1: not given
  std::optional<std::int64_t> experts;
  std::int64_t steps = 20, warmup = 5;
  bool predict = false;
  /// Neither a measured file, the prediction alone nor a file alone: measure on this machine.
  [[nodiscard]] bool measure_here() const {
    return measured.empty() && !predict && workload_out.empty() && request_out.empty();
  }
};

constexpr const char* kRunner = "moesim-validate-run";

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

int validate_scenario(const Options& o, const Scenario& s) {
  validate::ProxyOptions po;
  po.gpus = o.gpus;
  if (o.layers != -1) po.layers = o.layers;
  po.experts = o.experts;
  po.microbatches = o.microbatches;
  const validate::ProxyPlan plan = validate::plan_proxy(s, po);
  std::printf("moesim validate · %s\n", s.name.c_str());
  for (const std::string& line : plan.notes) std::printf("proxy      %s\n", line.c_str());
  if (!o.workload_out.empty()) {
    const ValidationWorkload w = validate::make_workload(plan, o.steps, o.warmup);
    write_file_atomically(o.workload_out, report::validation_workload_to_json_text(w));
    std::printf("moesim validate: wrote %s (moesim.validation-workload/1): %lld layer(s), %lld micro-batch(es) of "
                "%lld tokens per rank, %lld warm-up and %lld timed step(s); run it with %s --workload %s --out "
                "MEASURED.json\n",
                o.workload_out.c_str(), static_cast<long long>(w.layers), static_cast<long long>(w.microbatches),
                static_cast<long long>(w.tokens_per_rank), static_cast<long long>(w.warmup),
                static_cast<long long>(w.steps), kRunner, o.workload_out.c_str());
    if (o.measured.empty() && !o.predict && o.request_out.empty()) return 0;
  }
  if (!o.request_out.empty()) {
    std::int64_t left_out = 0;
    const hw::CalibrationRequest request = program::calibration_request_of(plan.scenario, left_out);
    write_file_atomically(o.request_out, report::calibration_request_json_text(request));
    std::printf("moesim validate: wrote %s (moesim.calibration-request/1): the proxy's %zu GEMM, %zu grouped-GEMM, "
                "%zu attention and %zu kernel shapes%s; measure them with moesim-calibrate --request %s\n",
                o.request_out.c_str(), request.gemm.size(), request.grouped_gemm.size(), request.attention.size(),
                request.kernels.size(),
                left_out > 0 ? fmt::format(" ({} beyond the calibrator left out)", left_out).c_str() : "",
                o.request_out.c_str());
    if (o.measured.empty() && !o.predict) return 0;
  }
  std::optional<ValidationWorkload> workload;
  fs::path runner;
  if (o.measure_here()) {
    if (!cuda_device_present()) {
      std::fprintf(stderr,
                   "moesim validate: no CUDA device found (no /dev/nvidiactl, no /proc/driver/nvidia/gpus), so "
                   "nothing can be measured; give --measured RUN.json to compare a run measured elsewhere, "
                   "--predict for the prediction alone, or --workload OUT to write what the runner would run; "
                   "nothing written\n");
      return static_cast<int>(ExitCode::kBadInput);
    }
    // What the runner cannot run is refused before anything is predicted or run.
    workload = validate::make_workload(plan, o.steps, o.warmup);
    runner = sibling_binary(kRunner);
    std::error_code ec;
    if (!fs::is_regular_file(runner, ec)) {
      std::fprintf(stderr,
                   "moesim validate: %s not found beside moesim (build with CUDA: nvcc and NCCL, cmake "
                   "-DMOESIM_CUDA=ON), so it cannot measure here (looked for %s); give --measured RUN.json to "
                   "compare a run measured elsewhere, or --predict; nothing written\n",
                   kRunner, runner.string().c_str());
      return static_cast<int>(ExitCode::kBadInput);
    }
  }
  const validate::ProxyPrediction predicted = validate::predict_proxy(plan);
  if (!workload && o.measured.empty()) {
    print_prediction(predicted);
    return 0;
  }
  MeasuredRun run;
  std::string measured_file = o.measured;
  if (workload) {
    if (const int rc = run_validation_runner(runner, *workload, run); rc != 0) return rc;
    measured_file = std::string(kRunner) + " output";
  } else {
    run = config::load_measured_run(o.measured);
  }
  ValidationResult v;
  try {
    v = validate::compare_run(s.name, plan, predicted, run);
  } catch (InputError& e) {
    throw e.in_file(measured_file);
  }
  print_comparison(v);
  const std::string text = report::validation_to_json_text(v);
  if (!o.json_out.empty()) write_file_atomically(o.json_out, text);
  if (!o.html_out.empty()) write_file_atomically(o.html_out, report::file_document_to_html(config::parse_json_text(text, o.json_out), o.json_out));
  return 0;
}

int run_validate(const Options& o) {
  // Every output folder is checked before the proxy is planned or run.
  check_output_path_of("--workload", o.workload_out);
  check_output_path_of("--calibration-request", o.request_out);
  check_output_path_of("--json", o.json_out);
  check_output_path_of("--html", o.html_out);
  validate::check_run_length(o.steps, o.warmup);
  const Scenario s = config::load_scenario_argument(o.scenario);
  return naming_scenario_file(o.scenario, [&] { return validate_scenario(o, s); });
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
  sub->add_option_function<std::int64_t>(
      "--experts", [opt](const std::int64_t& n) { opt->experts = n; },
      "routed experts of the proxy's MoE layers (default: the model's; at least top-k, a multiple of the "
      "proxy's EP)");
  sub->add_option("--steps", opt->steps, "timed steps of the run on this machine")->capture_default_str();
  sub->add_option("--warmup", opt->warmup, "untimed warm-up steps before them")->capture_default_str();
  sub->add_option("--measured", opt->measured, "what the proxy runner measured (moesim.validation-measured/1)");
  sub->add_flag("--predict", opt->predict, "print the proxy's prediction per phase; measure nothing");
  sub->add_option("--workload", opt->workload_out,
                  "write what the proxy runner runs (moesim.validation-workload/1) and measure nothing (no GPU "
                  "needed)");
  sub->add_option("--calibration-request", opt->request_out,
                  "write the proxy's kernel shapes as a calibration request (moesim.calibration-request/1) for "
                  "moesim-calibrate --request, and measure nothing (no GPU needed)");
  sub->add_option("--json", opt->json_out,
                  "write the comparison (moesim.validation/1); needs --measured or a run on this machine's GPUs");
  sub->add_option("--html", opt->html_out, "write the comparison as a self-contained HTML page");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      for (const auto& [flag, path] : {std::pair{"--json", opt->json_out}, std::pair{"--html", opt->html_out}}) {
        if (!path.empty() && opt->measured.empty() && (!opt->measure_here() || !cuda_device_present())) {
          throw InputError(flag, path, "the comparison needs a measured run",
                           "--measured RUN.json, or a run on this machine's CUDA device (without --predict or "
                           "--workload)");
        }
      }
      return run_validate(*opt);
    });
  });
}

}  // namespace moesim::cli
