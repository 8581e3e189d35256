// `moesim memory SCENARIO`: per-stage memory of the most loaded rank, every term, and where each
// stage's per-op timeline peaks; `--timeline` / `--timeline-csv` show that timeline (docs/memory.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/memory_timeline_text.hpp"
#include "cli/scenario_errors.hpp"
#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "memory/memory_timeline.hpp"
#include "memory/rank_memory.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::cli {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Options {
  std::string scenario;
  double expert_load_factor = 1.0;
  bool timeline = false;
  std::string timeline_csv;
  std::int64_t stage = -1;  ///< stage whose timeline is shown; -1 = the stage that peaks
};

int memory_of_scenario(const Options& opt, const Scenario& s) {
  const auto stages = schedule::plan_stages(s);
  memory::MemoryOptions mo;
  mo.expert_load_factor = opt.expert_load_factor;
  if (opt.stage >= s.parallel.pp) {
    throw InputError("--stage", std::to_string(opt.stage), "no such pipeline stage",
                     fmt::format("0 to {} (pp = {})", s.parallel.pp - 1, s.parallel.pp));
  }
  const double capacity = s.system.gpu.hbm_capacity.value();
  std::printf("%s · %s × %lld · capacity %.1f GiB per GPU\n", s.name.c_str(), s.system.gpu.name.c_str(),
              static_cast<long long>(s.system.gpus), capacity / kGiB);
  std::printf("%5s %8s %8s %8s %9s %8s %8s %8s %8s %8s %8s %9s %5s  (GiB; in flight = stage-equivalent "
              "micro-batches)\n",
              "stage", "weights", "lp_copy", "grads", "optimizer", "in_fl", "activ", "working", "nccl", "context",
              "frag", "peak", "fits");
  double peak = 0;
  std::int64_t peak_stage = 0;
  std::vector<memory::TimelinePeak> op_peaks;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto st = static_cast<std::int64_t>(i);
    const auto m = memory::rank_memory(s, st, stages[i], mo);
    op_peaks.push_back(memory::timeline_peak(s, st, stages[i], m, mo));
    const double total = m.total_bytes();
    std::printf("%5zu %8.2f %8.2f %8.2f %9.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f %5s\n", i,
                m.weights_bytes / kGiB, m.low_precision_weight_bytes / kGiB, m.gradients_bytes / kGiB,
                m.optimizer_bytes / kGiB, m.inflight_microbatches, m.activations_bytes / kGiB,
                m.activation_working_bytes / kGiB, m.comm_buffers_bytes / kGiB, m.cuda_context_bytes / kGiB,
                m.fragmentation_bytes / kGiB, total / kGiB, total <= capacity ? "yes" : "NO");
    if (total > peak) {
      peak = total;
      peak_stage = st;
    }
  }
  // The table adds each stage's largest one-at-a-time buffer to its largest saved level; the
  // timeline knows which op runs at that moment, so its peak can be lower (docs/memory.md).
  std::printf("per-op timeline peak of each stage (GiB):\n");
  for (std::size_t i = 0; i < op_peaks.size(); ++i) {
    std::printf("%5zu %9.2f  %s\n", i, op_peaks[i].bytes / kGiB, memory::describe(op_peaks[i].op).c_str());
  }
  // Megatron's rank order puts pipeline stage k at ranks k·(gpus/pp) … (k+1)·(gpus/pp) − 1.
  const std::int64_t first_rank = peak_stage * (s.system.gpus / s.parallel.pp);
  std::printf("peak %.2f GiB on pipeline stage %lld (ranks %lld-%lld): %s; at %s\n", peak / kGiB,
              static_cast<long long>(peak_stage), static_cast<long long>(first_rank),
              static_cast<long long>(first_rank + s.system.gpus / s.parallel.pp - 1),
              peak <= capacity ? "fits" : fmt::format("does NOT fit ({:.1f} GiB over)", (peak - capacity) / kGiB).c_str(),
              memory::describe(op_peaks[static_cast<std::size_t>(peak_stage)].op).c_str());
  if (opt.timeline || !opt.timeline_csv.empty()) {
    const std::int64_t st = opt.stage >= 0 ? opt.stage : peak_stage;
    const memory::MemoryTimeline t = memory::memory_timeline(s, st, stages[static_cast<std::size_t>(st)], mo);
    if (opt.timeline) std::printf("\n%s", timeline_text(t).c_str());
    if (!opt.timeline_csv.empty()) write_file_atomically(opt.timeline_csv, timeline_csv(t));
  }
  return 0;  // not fitting is an answer, not an error (scenario.md)
}

int run_memory(const Options& opt) {
  check_output_path_of("--timeline-csv", opt.timeline_csv);
  const Scenario s = config::load_scenario_argument(opt.scenario);
  return naming_scenario_file(opt.scenario, [&] { return memory_of_scenario(opt, s); });
}

}  // namespace

void register_memory(CLI::App& app, Commands& commands) {
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("memory", "Per-stage memory of one rank: weights, grads, optimizer, activations, buffers.");
  sub->add_option("scenario", opt->scenario, "scenario JSON file or built-in scenario name")->required();
  sub->add_option("--expert-load", opt->expert_load_factor,
                  "routed copies on the most loaded EP rank over the balanced share (1 = balanced)")
      ->capture_default_str()
      ->check(finite_range(1.0, 1000.0));
  sub->add_flag("--timeline", opt->timeline,
                "print the per-op memory timeline of one stage's rank, one line per pass (the peak stage unless --stage)");
  sub->add_option("--timeline-csv", opt->timeline_csv,
                  "write that timeline as CSV, one row per op (pass, micro-batch, chunk, direction, op, layer, bytes)");
  sub->add_option("--stage", opt->stage, "pipeline stage for --timeline / --timeline-csv (default: the stage that peaks)")
      ->check(CLI::NonNegativeNumber);
  sub->callback([opt, &commands] { commands.set([opt] { return run_memory(*opt); }); });
}

}  // namespace moesim::cli
