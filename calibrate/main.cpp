// moesim-calibrate: measures this machine's GPUs (kernels on GPU 0, NCCL over the GPUs in use) and
// writes a moesim.profile/1 file atomically. README.md beside this file documents the options, what
// is measured and the exit codes: 0 written, 1 written but some rows were lost (listed on stderr) or
// a fatal CUDA error, 2 bad usage / bad request / no CUDA device (nothing written).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "calibrate/cli_main.hpp"
#include "calibrate/log.hpp"
#include "calibrate/measure.hpp"
#include "calibrate/provenance.hpp"
#include "calibrate/summary.hpp"
#include "calibrate/sweep_plan.hpp"
#include "config/calibration_request_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "kernels/blas_context.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device_info.hpp"
#include "kernels/stream.hpp"
#include "report/profile_json.hpp"

namespace {

using namespace moesim::calibrate;

struct Options {
  bool list_devices = false;
  std::string out;
  std::string request;
  std::string log;
  bool quick = false;
  int gpus = 0;  // 0: every visible GPU
};

std::string quoted_command(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@") == std::string::npos;
    s += (i ? " " : "") + (plain ? a : "'" + a + "'");
  }
  return s;
}

constexpr std::string_view kProgram = "moesim-calibrate";

int fail(const std::string& message) { return usage_error(kProgram, message); }

// --list-devices: what a calibration would use, without measuring.
int list_devices() {
  const int n = moesim::kernels::cuda_device_count();
  if (n == 0) return fail("no CUDA device found");
  for (int d = 0; d < n; ++d) {
    const moesim::kernels::DeviceInfo info = moesim::kernels::query_device(d);
    std::printf("%d: %s (%d SMs, compute capability %d.%d, %.1f GiB)\n", d, info.name.c_str(), info.sm_count, info.cc_major, info.cc_minor,
                static_cast<double>(info.total_memory) / (1 << 30));
  }
  return 0;
}

int run(const Options& opt, const std::string& command) {
  if (opt.list_devices) return list_devices();
  if (opt.out.empty()) return fail("--out is required (see --help)");
  moesim::hw::CalibrationRequest request;
  if (!opt.request.empty()) request = moesim::config::load_calibration_request(opt.request);  // InputError -> exit 2 before any GPU work
  if (const auto missing = missing_out_folder(opt.out)) return fail(*missing);
  const std::filesystem::path out(opt.out);

  const int visible = moesim::kernels::cuda_device_count();
  if (visible == 0) return fail("no CUDA device found");
  if (opt.gpus > visible) return fail(fmt::format("--gpus {}: only {} CUDA device{} visible", opt.gpus, visible, visible == 1 ? " is" : "s are"));
  const int gpus = opt.gpus > 0 ? opt.gpus : visible;

  Log log(opt.log);
  const SweepPlan plan = make_sweep_plan(request, opt.quick);
  MOESIM_CUDA_CHECK(cudaSetDevice(0));
  moesim::hw::Profile profile;
  profile.provenance = measured_provenance(visible, command);
  log.progress(fmt::format("moesim-calibrate: {} ({} SMs, {} / {} MHz), {} GPU{} visible, {} in use; driver {}, CUDA {}, cuBLAS {}, NCCL {}; {} run",
                           profile.provenance.device_name, profile.provenance.sm_count.value_or(0), profile.provenance.sm_clock_mhz.value_or(0),
                           profile.provenance.memory_clock_mhz.value_or(0), visible, visible == 1 ? "" : "s", gpus, profile.provenance.driver,
                           profile.provenance.cuda_runtime, profile.provenance.cublas, profile.provenance.nccl, opt.quick ? "quick" : "full"));

  std::vector<std::string> failures, unsupported;
  {
    moesim::kernels::Stream stream;
    moesim::kernels::BlasContext blas(stream);
    MeasureContext ctx{plan, log, stream, blas, moesim::kernels::query_device(0), {}, {}};
    measure_copy(ctx, profile);
    measure_memory_kernels(ctx, profile);
    measure_gemm(ctx, profile);
    measure_grouped_gemm(ctx, profile);
    measure_attention(ctx, profile);
    failures = std::move(ctx.failures);
    unsupported = std::move(ctx.unsupported);
  }
  measure_collectives(plan, log, gpus, profile, failures);

  moesim::write_file_atomically(out, moesim::report::profile_to_json_text(profile));
  log.progress(fmt::format("wrote {}: {} gemm, {} grouped_gemm, {} kernels, {} attention, {} collectives rows", opt.out, profile.gemm.size(),
                           profile.grouped_gemm.size(), profile.kernels.size(), profile.attention.size(), profile.collectives.size()));
  log.progress("efficiency summary:");
  for (const std::string& line : efficiency_summary(profile).lines) log.progress("  " + line);
  for (const std::string& u : unsupported) log.progress("unsupported (not an error): " + u);
  if (!failures.empty()) {
    log.progress(fmt::format("{} measurement{} failed and {} not in the profile:", failures.size(), failures.size() == 1 ? "" : "s",
                             failures.size() == 1 ? "is" : "are"));
    for (const std::string& f : failures) log.progress("  " + f);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"moesim-calibrate: measure this machine's GPU kernels and NCCL collectives into a moesim.profile/1 file"};
  app.add_option("--out", opt.out, "profile to write (atomically: a temporary file, then a rename); required");
  app.add_flag("--quick", opt.quick, "fewer shapes and repeats (a few minutes on one GPU)");
  app.add_option("--request", opt.request, "moesim.calibration-request/1 file: shapes to measure on top of the generic grid");
  app.add_option("--gpus", opt.gpus, "GPUs for the NCCL collectives (default: all visible)")->check(CLI::Range(1, 4096));
  app.add_option("--log", opt.log, "write every measurement's detail line to this file");
  app.add_flag("--list-devices", opt.list_devices, "print the visible CUDA devices and exit (exit 2 when there is none)");
  return parse_and_run(app, argc, argv, kProgram, [&] { return run(opt, quoted_command(argc, argv)); });
}
