// moesim-validate-run: runs a validation workload (moesim.validation-workload/1, written by
// `moesim validate`) on this machine's GPUs and writes what rank 0 measured as
// moesim.validation-measured/1, atomically. Exit codes: 0 written; 1 a CUDA/NCCL failure or no result
// within --timeout-s (nothing written); 2 bad usage, a bad or unsupported workload, a GPU that is not the workload's, or no CUDA
// device (nothing written). docs/validation.md describes the proxy and its phases.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "calibrate/cli_main.hpp"
#include "calibrate/gpu_preset.hpp"
#include "calibrate/log.hpp"
#include "calibrate/proxy/proxy_run.hpp"
#include "config/validation_workload_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device_info.hpp"
#include "report/validation_json.hpp"

namespace {

struct Options {
  std::string workload, out, log;
  int timeout_s = 900;
};

/// Ends the process when the run has not finished in time: a collective whose peer died, or a stuck
/// kernel, would otherwise hang the caller (moesim validate, a CI job) forever. Nothing is written.
class Watchdog {
 public:
  explicit Watchdog(int seconds)
      : thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!done_cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
            std::fprintf(stderr,
                         "moesim-validate-run: no result after %d s (--timeout-s): a collective waiting on a "
                         "failed peer or a stuck kernel; nothing written\n",
                         seconds);
            std::fflush(stderr);
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;  // last: started once the members it uses exist
};

constexpr std::string_view kProgram = "moesim-validate-run";

int fail(const std::string& message) { return moesim::calibrate::usage_error(kProgram, message); }

int run(const Options& opt) {
  const moesim::ValidationWorkload w = moesim::config::load_validation_workload(opt.workload);  // InputError: exit 2
  if (const auto missing = moesim::calibrate::missing_out_folder(opt.out)) return fail(*missing);
  const std::filesystem::path out(opt.out);
  const int visible = moesim::kernels::cuda_device_count();
  if (visible == 0) return fail("no CUDA device found");
  if (w.gpus > visible) {
    return fail(fmt::format("{}: the workload runs on {} GPUs, {} visible", opt.workload, w.gpus, visible));
  }
  const moesim::kernels::DeviceInfo device = moesim::kernels::query_device(0);
  const std::string preset = moesim::calibrate::gpu_preset_for(device.name);
  if (preset != w.gpu) {
    return fail(fmt::format("{}: at /gpu: the workload is sized for {}, this device is {} ({}); allowed: {}", opt.workload, w.gpu,
                            device.name, preset, preset));
  }
  moesim::calibrate::Log log(opt.log);
  log.progress(fmt::format("moesim-validate-run: {} on {} × {}: {} layer(s), {} micro-batch(es), {} warm-up + {} timed steps",
                           w.scenario, w.gpus, device.name, w.layers, w.microbatches, w.warmup, w.steps));
  moesim::MeasuredRun run;
  try {
    const Watchdog watchdog(opt.timeout_s);
    run = moesim::proxy::run_workload(w, [&](const std::string& line) { log.detail(line); });
  } catch (const std::invalid_argument& e) {
    return fail(fmt::format("{}: {}", opt.workload, e.what()));
  }
  run.source = fmt::format("moesim-validate-run on {} × {} ({} timed steps after {} warm-up)", w.gpus, device.name, w.steps, w.warmup);
  moesim::write_file_atomically(out, moesim::report::measured_run_to_json_text(run));
  log.progress(fmt::format("wrote {}: step {:.6f} s, peak memory {:.2f} GiB", opt.out, run.step_time_s,
                           run.peak_memory_bytes / (1024.0 * 1024.0 * 1024.0)));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  CLI::App app{"moesim-validate-run: run a validation workload on this machine's GPUs and write what it measured"};
  app.add_option("--workload", opt.workload, "moesim.validation-workload/1 file (moesim validate --workload)")->required();
  app.add_option("--out", opt.out, "moesim.validation-measured/1 file to write (atomically)")->required();
  app.add_option("--log", opt.log, "write every step's time to this file");
  app.add_option("--timeout-s", opt.timeout_s, "give up (exit 1, nothing written) when the run takes longer (default 900)")
      ->check(CLI::Range(1, 86400));
  return moesim::calibrate::parse_and_run(app, argc, argv, kProgram, [&] { return run(opt); });
}
