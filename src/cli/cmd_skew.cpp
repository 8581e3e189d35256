// `moesim skew SCENARIO [--sweep PARAM=FROM:TO:STEP] [--redundant N] [--json OUT]`: how the step time
// grows with routing skew, and how much of the penalty an EPLB-style expert placement wins back.
#include <cmath>
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
#include "sim/step_simulator.hpp"

namespace moesim::cli {
namespace {

struct Sweep {
  std::string parameter = "sigma";  ///< sigma (lognormal), s (zipf), alpha (dirichlet)
  std::vector<double> values;
};

/// "sigma=0:1.5:0.25" → lognormal σ ∈ {0, 0.25, …, 1.5}.
Sweep parse_sweep(const std::string& text) {
  const auto eq = text.find('=');
  const std::string allowed = "sigma=FROM:TO:STEP (lognormal), s=FROM:TO:STEP (zipf), alpha=FROM:TO:STEP (dirichlet)";
  if (eq == std::string::npos) throw InputError("--sweep", text, "expected PARAM=FROM:TO:STEP", allowed);
  Sweep sw;
  sw.parameter = text.substr(0, eq);
  if (sw.parameter != "sigma" && sw.parameter != "s" && sw.parameter != "alpha") {
    throw InputError("--sweep", text, "unknown skew parameter '" + sw.parameter + "'", allowed);
  }
  double from = 0, to = 0, step = 0;
  char extra = 0;
  if (std::sscanf(text.c_str() + eq + 1, "%lf:%lf:%lf%c", &from, &to, &step, &extra) != 3 || !(step > 0) ||
      !(to >= from) || !std::isfinite(from) || !std::isfinite(to) || from < 0 || (to - from) / step > 100) {
    throw InputError("--sweep", text, "FROM:TO:STEP must be numbers with 0 <= FROM <= TO, STEP > 0, at most 100 steps",
                     allowed);
  }
  for (double v = from; v <= to + 1e-9 * step; v += step) sw.values.push_back(v);
  return sw;
}

/// The scenario with its routing set to the sweep's distribution at `value`; 0 means balanced.
Scenario with_skew(Scenario s, const Sweep& sw, double value) {
  auto& r = s.moe.routing;
  if (value <= 0) {
    r.distribution = RoutingDistribution::kBalanced;
  } else if (sw.parameter == "sigma") {
    r.distribution = RoutingDistribution::kLognormal;
    r.lognormal_sigma = value;
  } else if (sw.parameter == "s") {
    r.distribution = RoutingDistribution::kZipf;
    r.zipf_s = value;
  } else {
    r.distribution = RoutingDistribution::kDirichlet;
    r.dirichlet_alpha = value;
  }
  return s;
}

struct Options {
  std::string scenario, sweep = "sigma=0:1:0.5", json_out;
  std::int64_t redundant = 1;
};

int run_skew(const Options& o) {
  OutputBatch outputs;  // checked before the simulations, written after them
  outputs.expect("--json", o.json_out);
  const Sweep sw = parse_sweep(o.sweep);
  const Scenario base = config::load_scenario_argument(o.scenario);
  return naming_scenario_file(o.scenario, [&] {
    if (!base.model.is_moe() || base.parallel.ep < 2) {
      throw InputError("/parallel/ep", std::to_string(base.parallel.ep),
                       "skew needs an MoE model with expert parallelism (ep >= 2)", "ep >= 2 with num_moe_experts > 0");
    }
    std::printf("%s · %s × %lld · EP%lld · %lld experts top-%lld · redundant slots per rank %lld\n",
                base.name.c_str(), base.system.name.c_str(), static_cast<long long>(base.system.gpus),
                static_cast<long long>(base.parallel.ep), static_cast<long long>(base.model.num_moe_experts),
                static_cast<long long>(base.model.moe_router_topk), static_cast<long long>(o.redundant));
    std::printf("%8s %10s %10s %10s %9s %12s %10s %9s %10s\n", sw.parameter.c_str(), "imbalance", "worst", "step_s",
                "penalty", "eplb_imbal", "eplb_step_s", "penalty", "recovered");
    SkewSweep out;
    out.scenario = base.name;
    out.parameter = sw.parameter;
    out.redundant_experts_per_rank = o.redundant;
    out.balanced_step_time_s = sim::simulate_step(with_skew(base, sw, 0)).result.step_time_s;
    sim::SimOptions eplb_options;
    eplb_options.redundant_experts_per_rank = o.redundant;
    for (double v : sw.values) {
      const Scenario s = with_skew(base, sw, v);
      const Result plain = sim::simulate_step(s).result;
      const Result eplb = sim::simulate_step(s, eplb_options).result;
      SkewPoint p;
      p.value = v;
      p.mean_imbalance = plain.routing.mean_imbalance;
      p.max_imbalance = plain.routing.max_imbalance;
      p.step_time_s = plain.step_time_s;
      p.penalty = plain.step_time_s / out.balanced_step_time_s - 1.0;
      p.eplb_mean_imbalance = eplb.routing.mean_imbalance;
      p.eplb_step_time_s = eplb.step_time_s;
      p.eplb_penalty = eplb.step_time_s / out.balanced_step_time_s - 1.0;
      p.recovered = p.penalty > 1e-12 ? (p.penalty - p.eplb_penalty) / p.penalty : 0.0;
      std::printf("%8.3f %10.3f %10.3f %10.4f %8.1f%% %12.3f %10.4f %8.1f%% %9.1f%%\n", v, p.mean_imbalance,
                  p.max_imbalance, p.step_time_s, 100 * p.penalty, p.eplb_mean_imbalance, p.eplb_step_time_s,
                  100 * p.eplb_penalty, 100 * p.recovered);
      out.points.push_back(p);
    }
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
