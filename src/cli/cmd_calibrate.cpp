// `moesim calibrate [--scenario S | --model M] [--quick] --out PROFILE.json`: the shapes the model or
// scenario runs become a calibration request, which the `moesim-calibrate` binary beside this one
// (built only with the CUDA toolkit, so that moesim itself never links CUDA) measures on the local GPUs
// and turns into a profile (docs/profile.md). `--request FILE` writes the request alone (no GPU needed).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/gpu_presence.hpp"
#include "cli/sibling_binary.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/profile_loader.hpp"
#include "config/scenario_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "program/calibration_request.hpp"
#include "report/calibration_request_json.hpp"

namespace moesim::cli {

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string scenario;
  std::string model;
  std::string out;
  std::string request;
  bool quick = false;
};

/// The scenario whose shapes are requested: the one given, or the model's layers on one HGX node
/// (tp 1, ep = gcd(experts, 8), seq 4096, micro-batch 1), the layout a single node runs.
Scenario scenario_of(const Options& o) {
  if (!o.scenario.empty()) return config::load_scenario_argument(o.scenario);
  const std::string model = o.model.empty() ? "mixtral-8x7b" : o.model;
  config::Json obj{{"name", "calibration shapes of " + model},
                   {"model", model},
                   {"system", config::Json{{"preset", "hgx-h100"}, {"gpus", 8}}},
                   {"training", config::Json{{"seq_length", 4096}, {"global_batch_size", 8}}}};
  Scenario probe = config::parse_scenario_spec(obj, "--model", fs::current_path());
  if (probe.model.is_moe()) {
    obj["parallel"] = config::Json{{"ep", std::gcd<std::int64_t>(probe.model.num_moe_experts, 8)}};
  }
  return config::parse_scenario(obj, "--model", fs::current_path());
}

int run_calibrate(const Options& o) {
  if (!o.scenario.empty() && !o.model.empty()) {
    throw InputError("--model", o.model, "give --scenario or --model, not both");
  }
  if (o.out.empty() && o.request.empty()) {
    throw InputError("--out", "", "required: the profile to write (or --request FILE to write only the request)");
  }
  check_output_path_of("--request", o.request);
  check_output_path_of("--out", o.out);
  const Scenario s = scenario_of(o);
  std::int64_t left_out = 0;
  const hw::CalibrationRequest request = program::calibration_request_of(s, left_out);
  const std::string text = report::calibration_request_json_text(request);
  std::string counts = fmt::format("{} GEMM, {} grouped-GEMM, {} attention and {} kernel shapes", request.gemm.size(),
                                   request.grouped_gemm.size(), request.attention.size(), request.kernels.size());
  if (left_out > 0) counts += fmt::format(" ({} beyond the calibrator's limits left out)", left_out);
  if (!o.request.empty()) {
    write_file_atomically(o.request, text);
    std::printf("moesim calibrate: wrote %s: %s of %s\n", o.request.c_str(), counts.c_str(), s.name.c_str());
    if (o.out.empty()) return 0;
  }
  if (!cuda_device_present()) {
    std::fprintf(stderr, "moesim calibrate: no CUDA device found (no /dev/nvidiactl, no /proc/driver/nvidia/gpus); "
                         "nothing written\n");
    return static_cast<int>(ExitCode::kBadInput);
  }
  const fs::path binary = sibling_binary("moesim-calibrate");
  std::error_code ec;
  if (!fs::is_regular_file(binary, ec)) {
    std::fprintf(stderr,
                 "moesim calibrate: %s not found: this moesim was built without the CUDA toolkit (nvcc and NCCL), "
                 "so it cannot measure; rebuild with them (cmake -DMOESIM_CUDA=ON)\n",
                 binary.string().c_str());
    return static_cast<int>(ExitCode::kBadInput);
  }
  // The request goes to a temporary file the binary reads; the profile is written by the binary
  // (atomically) and checked here by the strict loader.
  const fs::path tmp = fs::temp_directory_path() / fmt::format("moesim-calibration-request-{}.json", ::getpid());
  write_file_atomically(tmp, text);
  std::vector<std::string> args{"--request", tmp.string(), "--out", o.out};
  if (o.quick) args.emplace_back("--quick");
  std::printf("moesim calibrate: measuring %s of %s (plus the generic grid) with %s\n", counts.c_str(), s.name.c_str(),
              binary.string().c_str());
  std::fflush(stdout);
  const int rc = run_binary(binary, args, "moesim calibrate");
  fs::remove(tmp, ec);
  if (rc != 0) return rc;
  const auto profile = config::load_profile_file(o.out);
  std::printf("moesim calibrate: wrote %s (%s, gpu %s): %zu gemm, %zu grouped_gemm, %zu kernels, %zu attention, %zu "
              "collectives rows\n",
              o.out.c_str(), std::string(hw::to_string(profile->provenance.source)).c_str(),
              profile->provenance.gpu.c_str(), profile->gemm.size(), profile->grouped_gemm.size(),
              profile->kernels.size(), profile->attention.size(), profile->collectives.size());
  return 0;
}

}  // namespace

void register_calibrate(CLI::App& app, Commands& commands) {
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "calibrate", "Measure the kernels and collectives a model runs on this machine's GPUs into a profile (docs/profile.md).");
  sub->add_option("--scenario", opt->scenario, "scenario JSON file or built-in scenario name whose shapes to measure");
  sub->add_option("--model", opt->model,
                  "model preset whose shapes to measure, at one HGX node's layout (default: mixtral-8x7b)");
  sub->add_flag("--quick", opt->quick, "a short sweep (a few minutes): fewer generic shapes and repeats");
  sub->add_option("--out", opt->out, "the profile to write (moesim.profile/1)");
  sub->add_option("--request", opt->request,
                  "also write the calibration request (moesim.calibration-request/1) here; without --out, only that "
                  "(no GPU needed)");
  sub->callback([opt, &commands] { commands.set([opt] { return run_calibrate(*opt); }); });
}

}  // namespace moesim::cli
