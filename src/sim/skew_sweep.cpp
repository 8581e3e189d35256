#include "sim/skew_sweep.hpp"

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "sim/step_simulator.hpp"

namespace moesim::sim {

SkewRange parse_skew_range(const std::string& text) {
  const auto eq = text.find('=');
  const std::string allowed = "sigma=FROM:TO:STEP (lognormal), s=FROM:TO:STEP (zipf), alpha=FROM:TO:STEP (dirichlet)";
  if (eq == std::string::npos) throw InputError("--sweep", text, "expected PARAM=FROM:TO:STEP", allowed);
  SkewRange sw;
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

Scenario with_skew(Scenario s, const std::string& parameter, double value) {
  auto& r = s.moe.routing;
  if (value <= 0) {
    r.distribution = RoutingDistribution::kBalanced;
  } else if (parameter == "sigma") {
    r.distribution = RoutingDistribution::kLognormal;
    r.lognormal_sigma = value;
  } else if (parameter == "s") {
    r.distribution = RoutingDistribution::kZipf;
    r.zipf_s = value;
  } else {
    r.distribution = RoutingDistribution::kDirichlet;
    r.dirichlet_alpha = value;
  }
  return s;
}

SkewSweep sweep_skew(const Scenario& base, const SkewRange& range, std::int64_t redundant,
                     const std::function<void(const SkewPoint&)>& on_point) {
  SkewSweep out;
  out.scenario = base.name;
  out.parameter = range.parameter;
  out.redundant_experts_per_rank = redundant;
  // Contiguous placement against EPLB with `redundant` slots per rank; the base's window (interval,
  // profile) if it names one.
  Scenario contiguous = base;
  contiguous.moe.placement = PlacementSpec{};
  Scenario replaced = base;
  replaced.moe.placement.strategy = PlacementStrategy::kEplb;
  replaced.moe.placement.redundant_experts = redundant * base.parallel.ep;
  out.balanced_step_time_s = simulate_step(with_skew(contiguous, range.parameter, 0)).result.step_time_s;
  for (double v : range.values) {
    const Result plain = simulate_step(with_skew(contiguous, range.parameter, v)).result;
    const Result eplb = simulate_step(with_skew(replaced, range.parameter, v)).result;
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
    if (on_point) on_point(p);
    out.points.push_back(p);
  }
  return out;
}

}  // namespace moesim::sim
