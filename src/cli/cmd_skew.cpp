// `moesim skew SCENARIO [--sweep PARAM=FROM:TO:STEP] [--redundant N] [--json OUT]`: how the step time
// grows with routing skew, and how much of the penalty an EPLB-style expert placement wins back.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/scenario_errors.hpp"
#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "report/skew_json.hpp"
#include "sim/skew_sweep.hpp"

namespace moesim::cli {
namespace {

struct Options {
  std::string scenario, sweep = "sigma=0:1:0.5", json_out;
  std::int64_t redundant = 1;
};

int run_skew(const Options& o) {
  OutputBatch outputs;  // checked before the simulations, written after them
  outputs.expect("--json", o.json_out);
  const sim::SkewRange sw = sim::parse_skew_range(o.sweep);
  const Scenario base = config::load_scenario_argument(o.scenario);
  return naming_scenario_file(o.scenario, [&] {
    if (!base.model.is_moe() || base.parallel.ep < 2) {
      throw InputError("/parallel/ep", std::to_string(base.parallel.ep),
                       "skew needs an MoE model with expert parallelism (ep >= 2)", "ep >= 2 with num_moe_experts > 0");
    }
    // Each rank holds an expert at most once: E/ep own slots plus at most E − E/ep replicas.
    const std::int64_t most = base.model.num_moe_experts - base.model.num_moe_experts / base.parallel.ep;
    if (o.redundant > most) {
      throw InputError("--redundant", std::to_string(o.redundant),
                       "a rank holds each expert at most once: at most num_moe_experts − num_moe_experts/ep = " +
                           std::to_string(most) + " redundant slots per rank",
                       "0 to " + std::to_string(most));
    }
    std::printf("%s · %s × %lld · EP%lld · %lld experts top-%lld · redundant slots per rank %lld\n",
                base.name.c_str(), base.system.name.c_str(), static_cast<long long>(base.system.gpus),
                static_cast<long long>(base.parallel.ep), static_cast<long long>(base.model.num_moe_experts),
                static_cast<long long>(base.model.moe_router_topk), static_cast<long long>(o.redundant));
    std::printf("%8s %10s %10s %10s %9s %12s %10s %9s %10s\n", sw.parameter.c_str(), "imbalance", "worst", "step_s",
                "penalty", "eplb_imbal", "eplb_step_s", "penalty", "recovered");
    const SkewSweep out = sim::sweep_skew(base, sw, o.redundant, [](const SkewPoint& p) {
      std::printf("%8.3f %10.3f %10.3f %10.4f %8.1f%% %12.3f %10.4f %8.1f%% %9.1f%%\n", p.value, p.mean_imbalance,
                  p.max_imbalance, p.step_time_s, 100 * p.penalty, p.eplb_mean_imbalance, p.eplb_step_time_s,
                  100 * p.eplb_penalty, 100 * p.recovered);
    });
    if (!o.json_out.empty()) outputs.write(o.json_out, report::skew_to_json_text(out));
    outputs.commit();
    return 0;
  });
}

}  // namespace

void register_skew(CLI::App& app, Commands& commands) {
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "skew", "Step time and per-EP-rank load as routing skew grows, with and without EPLB-style expert placement.");
  sub->add_option("scenario", opt->scenario, "scenario JSON file or built-in scenario name (an MoE model with ep > 1)")
      ->required();
  sub->add_option("--sweep", opt->sweep, "skew parameter and range, e.g. sigma=0:1.5:0.25 (0 = balanced)")
      ->capture_default_str();
  sub->add_option("--redundant", opt->redundant, "redundant expert slots per EP rank for the placement optimiser")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  sub->add_option("--json", opt->json_out, "write the table as JSON");
  sub->callback([opt, &commands] {
    commands.set([opt] { return run_skew(*opt); });
  });
}

}  // namespace moesim::cli
