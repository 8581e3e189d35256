// `moesim memory SCENARIO`: per-stage memory of the most loaded rank, every term (docs/memory.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/builtin_scenarios.hpp"
#include "memory/rank_memory.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::cli {

void register_memory(CLI::App& app, Commands& commands) {
  struct Options {
    std::string scenario;
    double expert_load_factor = 1.0;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("memory", "Per-stage memory of one rank: weights, grads, optimizer, activations, buffers.");
  sub->add_option("scenario", opt->scenario, "scenario JSON file or built-in scenario name")->required();
  sub->add_option("--expert-load", opt->expert_load_factor,
                  "routed copies on the most loaded EP rank over the balanced share (1 = balanced)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  sub->callback([opt, &commands] {
    commands.set([opt] {
      const Scenario s = config::load_scenario_argument(opt->scenario);
      const auto stages = schedule::plan_stages(s);
      memory::MemoryOptions mo;
      mo.expert_load_factor = opt->expert_load_factor;
      constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
      const double capacity = s.system.gpu.hbm_capacity.value();
      std::printf("%s · %s × %lld · capacity %.1f GiB per GPU\n", s.name.c_str(), s.system.gpu.name.c_str(),
                  static_cast<long long>(s.system.gpus), capacity / kGiB);
      std::printf("%5s %8s %8s %8s %9s %8s %8s %8s %8s %8s %8s %9s %5s  (GiB; in flight = stage-equivalent "
                  "micro-batches)\n",
                  "stage", "weights", "lp_copy", "grads", "optimizer", "in_fl", "activ", "working", "nccl", "context",
                  "frag", "peak", "fits");
      double peak = 0;
      std::int64_t peak_stage = 0;
      for (std::size_t i = 0; i < stages.size(); ++i) {
        const auto m = memory::rank_memory(s, static_cast<std::int64_t>(i), stages[i], mo);
        const double total = m.total_bytes();
        std::printf("%5zu %8.2f %8.2f %8.2f %9.2f %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %9.2f %5s\n", i,
                    m.weights_bytes / kGiB, m.low_precision_weight_bytes / kGiB, m.gradients_bytes / kGiB,
                    m.optimizer_bytes / kGiB, m.inflight_microbatches, m.activations_bytes / kGiB,
                    m.activation_working_bytes / kGiB, m.comm_buffers_bytes / kGiB, m.cuda_context_bytes / kGiB,
                    m.fragmentation_bytes / kGiB, total / kGiB, total <= capacity ? "yes" : "NO");
        if (total > peak) {
          peak = total;
          peak_stage = static_cast<std::int64_t>(i);
        }
      }
      // Megatron's rank order puts pipeline stage k at ranks k·(gpus/pp) … (k+1)·(gpus/pp) − 1.
      const std::int64_t first_rank = peak_stage * (s.system.gpus / s.parallel.pp);
      std::printf("peak %.2f GiB on pipeline stage %lld (ranks %lld-%lld): %s\n", peak / kGiB,
                  static_cast<long long>(peak_stage), static_cast<long long>(first_rank),
                  static_cast<long long>(first_rank + s.system.gpus / s.parallel.pp - 1),
                  peak <= capacity ? "fits" : fmt::format("does NOT fit ({:.1f} GiB over)", (peak - capacity) / kGiB).c_str());
      return 0;  // not fitting is an answer, not an error (scenario.md)
    });
  });
}

}  // namespace moesim::cli
