#include "planner/planner.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "estimate/step_estimator.hpp"
#include "planner/explain.hpp"
#include "predict/predict.hpp"
#include "planner/pareto.hpp"
#include "planner/search.hpp"
#include "planner/search_space.hpp"
#include "sim/step_simulator.hpp"

namespace moesim::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::size_t kSkewRows = 3;                 // the "top 3"
constexpr double kSkewSigmas[] = {0.5, 1.0};         // log-normal σ of expert popularity

bool better(const PlanRequest& req, const CandidateEstimate& a, const CandidateEstimate& b) {
  const double sa = objective_score(req, a.candidate.gpus, a.step_time_s);
  const double sb = objective_score(req, b.candidate.gpus, b.step_time_s);
  if (sa != sb) return sa > sb;
  return a.candidate.index < b.candidate.index;
}

// What a plan with no feasible layout says: the dominant reason, the smallest footprint and which
// knobs could still free memory but were outside the search space.
std::string infeasible_message(const PlanRequest& req, const SearchEvaluation& ev) {
  std::string msg = fmt::format("no feasible layout among {} candidates", ev.considered);
  if (ev.smallest.present) {
    const SmallestFootprint& f = ev.smallest;
    msg += fmt::format(": every layout that passes the layout rules needs more than the {:.1f} GiB per GPU of {} "
                       "less {:.1f} GiB of headroom (--memory-headroom); the smallest needs {:.1f} GiB on stage {} ({})",
                       req.base.system.gpu.hbm_capacity.value() / kGiB, req.base.system.gpu.name,
                       req.memory_headroom_gib, f.peak_bytes / kGiB, f.peak_stage, describe(req, f.candidate));
    std::vector<std::string> hints;
    const SearchSpace& sp = req.space;
    const bool has_full = std::any_of(sp.recompute.begin(), sp.recompute.end(), [](const RecomputeSpec& r) {
      return r.granularity == RecomputeGranularity::kFull;
    });
    if (!has_full) hints.emplace_back("recompute=full (not searched)");
    // Only hints that a larger value could satisfy on the largest cluster searched.
    const std::int64_t gpus = sp.gpus.back();
    if (sp.pp.back() < std::min(req.base.model.num_layers, gpus)) {
      hints.push_back(fmt::format("pp > {} (the largest searched)", sp.pp.back()));
    }
    if (req.base.model.is_moe() && sp.ep.back() < std::min(req.base.model.num_moe_experts, gpus)) {
      hints.push_back(fmt::format("ep > {} (the largest searched)", sp.ep.back()));
    }
    hints.push_back(fmt::format("more GPUs than {}", sp.gpus.back()));
    msg += "; it would take";
    for (std::size_t i = 0; i < hints.size(); ++i) msg += (i == 0 ? " " : i + 1 == hints.size() ? " or " : ", ") + hints[i];
  } else {
    msg += ": none passes the layout rules";
    for (const auto& r : ev.rejections) {
      msg += fmt::format("; {} × {} (e.g. {}: {})", r.count, r.reason, describe(req, r.example), r.example_detail);
      if (&r - ev.rejections.data() == 2) break;
    }
  }
  return msg;
}

Scenario skewed(Scenario s, double sigma) {
  s.moe.routing = RoutingSpec{};
  s.moe.routing.distribution = RoutingDistribution::kLognormal;
  s.moe.routing.lognormal_sigma = sigma;
  return s;
}

/// Whether two drawn routings make the same draws (same seed assumed): a plan ranked under log-normal
/// σ 1.0 has already simulated its finalists at the sensitivity's σ 1.0.
bool same_draws(const RoutingSpec& a, const RoutingSpec& b) {
  return a.distribution == b.distribution && a.distribution == RoutingDistribution::kLognormal &&
         a.lognormal_sigma == b.lognormal_sigma && a.per_layer_variation == b.per_layer_variation &&
         a.per_step_variation == b.per_step_variation && a.device_limited_nodes == b.device_limited_nodes;
}

}  // namespace

SearchEvaluation merge_evaluations(const PlanRequest& request, const std::vector<SearchEvaluation>& parts) {
  if (parts.empty()) throw InputError("", "", "nothing to merge", "the shard files 0/N … N-1/N of one plan");
  const std::int64_t n = parts.front().shards;
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)), false);
  for (const auto& p : parts) {
    if (p.shards != n || p.shard < 0 || p.shard >= n || seen[static_cast<std::size_t>(p.shard)]) {
      throw InputError("/search/shard", fmt::format("{}/{}", p.shard, p.shards),
                       "the shards of one plan must be 0/N … N-1/N, each once, with the same N",
                       fmt::format("0/{} … {}/{}", n, n - 1, n));
    }
    seen[static_cast<std::size_t>(p.shard)] = true;
  }
  if (std::find(seen.begin(), seen.end(), false) != seen.end()) {
    const auto missing = std::find(seen.begin(), seen.end(), false) - seen.begin();
    throw InputError("/search/shard", fmt::format("{}/{}", missing, n), "shard missing from the merge",
                     fmt::format("all of 0/{} … {}/{}", n, n - 1, n));
  }
  SearchEvaluation out;
  out.shards = n;
  std::map<std::string, Rejection> by_reason;
  for (const auto& p : parts) {
    out.considered += p.considered;
    out.feasible.insert(out.feasible.end(), p.feasible.begin(), p.feasible.end());
    for (const auto& r : p.rejections) {
      auto [it, fresh] = by_reason.emplace(r.reason, r);
      if (fresh) continue;
      it->second.count += r.count;
      if (r.example.index < it->second.example.index) {
        it->second.example = r.example;
        it->second.example_detail = r.example_detail;
      }
    }
    if (p.smallest.present && (!out.smallest.present || p.smallest.peak_bytes < out.smallest.peak_bytes ||
                               (p.smallest.peak_bytes == out.smallest.peak_bytes &&
                                p.smallest.candidate.index < out.smallest.candidate.index))) {
      out.smallest = p.smallest;
    }
  }
  std::sort(out.feasible.begin(), out.feasible.end(),
            [&](const CandidateEstimate& a, const CandidateEstimate& b) { return better(request, a, b); });
  for (auto& [reason, r] : by_reason) out.rejections.push_back(r);
  std::sort(out.rejections.begin(), out.rejections.end(),
            [](const Rejection& a, const Rejection& b) { return a.example.index < b.example.index; });
  return out;
}

Plan finish_plan(const PlanRequest& request, const std::vector<SearchEvaluation>& parts, const PlanOptions& options) {
  const SearchEvaluation ev = merge_evaluations(request, parts);
  if (ev.feasible.empty()) throw InfeasibleError(infeasible_message(request, ev));
  const int threads = resolve_threads(options.threads);

  Plan plan;
  plan.request = request;
  plan.considered = ev.considered;
  plan.feasible = static_cast<std::int64_t>(ev.feasible.size());
  plan.rejections = ev.rejections;
  plan.not_searched = unsearched_knobs(request);

  // Finalists: the best K by estimate, simulated op by op, then re-ranked by the simulation.
  const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(request.finalists, 0)),
                                               ev.feasible.size());
  const std::size_t rows = std::min(ev.feasible.size(), std::max(k, static_cast<std::size_t>(std::max<std::int64_t>(request.top, 1))));
  plan.rows.resize(rows);
  // A simulation takes up to seconds: a stop request is honoured before each one.
  auto check_stop = [&] {
    if (options.stop_requested && options.stop_requested()) throw StoppedError("stopped while simulating the finalists");
  };
  parallel_for(static_cast<std::int64_t>(rows), threads, [&](std::int64_t i) {
    check_stop();
    PlanRow& row = plan.rows[static_cast<std::size_t>(i)];
    row.estimate = ev.feasible[static_cast<std::size_t>(i)];
    const Scenario s = scenario_for(request, row.estimate.candidate);
    // A finalist too large to simulate op by op (sim::kMaxLayerPasses) keeps its estimate.
    const Fidelity fidelity = static_cast<std::size_t>(i) < k ? predict::finest_fidelity(s) : Fidelity::kEstimate;
    row.simulated = fidelity == Fidelity::kSimulation;
    row.result = predict::predict(s, fidelity).result;
  }, options.progress, "simulating finalists");
  std::stable_sort(plan.rows.begin(), plan.rows.begin() + static_cast<std::ptrdiff_t>(k), [&](const PlanRow& a, const PlanRow& b) {
    const double sa = objective_score(request, a.estimate.candidate.gpus, a.result.step_time_s);
    const double sb = objective_score(request, b.estimate.candidate.gpus, b.result.step_time_s);
    if (sa != sb) return sa > sb;
    return a.estimate.candidate.index < b.estimate.candidate.index;
  });
  // A what-if plan's winner, the one full result the plan reports, carries its prediction as asked.
  if (!plan.rows.empty()) predict::add_whatif_baseline(plan.rows.front().result);
  for (std::size_t i = 0; i < plan.rows.size(); ++i) {
    PlanRow& row = plan.rows[i];
    row.rank = static_cast<std::int64_t>(i) + 1;
    if (i == 0) continue;
    const PlanRow& above = plan.rows[i - 1];
    row.tied = row.simulated == above.simulated &&
               objective_score(request, row.estimate.candidate.gpus, row.result.step_time_s) ==
                   objective_score(request, above.estimate.candidate.gpus, above.result.step_time_s);
  }
  explain_winner(plan);
  explain_estimated_rows(plan);

  // The winner's layout at every precision the GPU supports (estimate), with the accuracy risk.
  const Candidate& win = plan.rows.front().estimate.candidate;
  const double win_estimate = plan.rows.front().estimate.step_time_s;
  for (Precision p : kAllPrecisions) {
    if (!request.base.system.gpu.supports(p) || p == Precision::kFp16) continue;
    Candidate c = win;
    c.precision = p;
    const CandidateOutcome o = evaluate_candidate(request, c);
    PrecisionAdvice a;
    a.precision = p;
    a.searched = std::find(request.space.precision.begin(), request.space.precision.end(), p) != request.space.precision.end();
    a.fits = o.feasible;
    a.step_time_s = o.feasible ? o.estimate.step_time_s : 0.0;
    a.speedup = o.feasible ? win_estimate / o.estimate.step_time_s : 0.0;
    a.risk = precision_risk(p);
    // The best layout at p: among the merged candidates when p was searched, else a search of the
    // same space at p alone.
    if (a.searched) {
      for (const auto& f : ev.feasible) {
        if (f.candidate.precision != p) continue;
        a.best_present = true;
        a.best = f.candidate;
        a.best_step_time_s = f.step_time_s;
        break;
      }
    } else {
      PlanRequest at_p = request;
      at_p.space.precision = {p};
      SearchOptions so;
      so.threads = threads;
      if (options.progress) {
        const std::string phase = "precision advice (" + std::string(to_string(p)) + ")";
        so.progress = [&options, phase](std::string_view, std::int64_t done, std::int64_t total) {
          options.progress(phase, done, total);
        };
      }
      const SearchEvaluation e = search(at_p, so);
      if (!e.feasible.empty()) {
        a.best_present = true;
        a.best = e.feasible.front().candidate;
        a.best_step_time_s = e.feasible.front().step_time_s;
      }
    }
    if (a.best_present) a.best_speedup = win_estimate / a.best_step_time_s;
    plan.precision.push_back(a);
  }

  // Sensitivity of the best simulated rows to routing skew: every EP rank simulated with its own load.
  if (request.skew_sensitivity && request.base.model.is_moe() && k > 0) {
    const std::size_t top = std::min(kSkewRows, k);
    // Under skew every EP rank is simulated: rows too large for that are left out.
    std::vector<std::pair<std::size_t, double>> runs;
    for (std::size_t row = 0; row < top; ++row) {
      for (const double sigma : kSkewSigmas) {
        if (sim::simulation_fits(skewed(scenario_for(request, plan.rows[row].estimate.candidate), sigma))) {
          runs.emplace_back(row, sigma);
        }
      }
    }
    plan.skew.resize(runs.size());
    parallel_for(static_cast<std::int64_t>(runs.size()), threads, [&](std::int64_t i) {
      check_stop();
      const auto [row, sigma] = runs[static_cast<std::size_t>(i)];
      const PlanRow& r = plan.rows[row];
      const Scenario s = skewed(scenario_for(request, r.estimate.candidate), sigma);
      // The finalist's own simulation already ran these draws: not twice.
      const Result skew = r.simulated && same_draws(s.moe.routing, request.base.moe.routing)
                              ? r.result
                              : sim::simulate_step(s).result;
      SkewSensitivity& out = plan.skew[static_cast<std::size_t>(i)];
      out.rank = r.rank;
      out.sigma = sigma;
      out.step_time_s = skew.step_time_s;
      out.slowdown = skew.step_time_s / r.result.step_time_s - 1.0;
      out.max_imbalance = skew.routing.max_imbalance;
    }, options.progress, "skew sensitivity");
  }
  plan.pareto = pareto_front(request, ev.feasible);
  // Every finalist was simulated and explained; the table shows the rows asked for.
  const auto shown = static_cast<std::size_t>(std::max<std::int64_t>(request.top, 1));
  if (plan.rows.size() > shown) plan.rows.resize(shown);
  return plan;
}

Plan make_plan(PlanRequest request, const PlanOptions& options) {
  complete_space(request);
  SearchOptions so;
  so.threads = options.threads;
  so.progress = options.progress;
  std::vector<SearchEvaluation> parts{search(request, so)};
  return finish_plan(request, parts, options);
}

}  // namespace moesim::planner
