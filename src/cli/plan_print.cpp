#include "cli/plan_print.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cli/summary.hpp"
#include "planner/search_space.hpp"

namespace moesim::cli {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string duration(double s) {
  if (s >= 2 * 86400) return fmt::format("{:.1f} days", s / 86400);
  if (s >= 2 * 3600) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.0f} s", s);
}

/// The routing a MoE plan was ranked under, as the scenario's `moe.routing` says it.
std::string routing_label(const RoutingSpec& r) {
  std::string out(to_string(r.distribution));
  switch (r.distribution) {
    case RoutingDistribution::kZipf: out += fmt::format(" s {}", r.zipf_s); break;
    case RoutingDistribution::kLognormal: out += fmt::format(" sigma {}", r.lognormal_sigma); break;
    case RoutingDistribution::kDirichlet: out += fmt::format(" alpha {}", r.dirichlet_alpha); break;
    case RoutingDistribution::kHistogram: out += " " + r.histogram_file; break;
    case RoutingDistribution::kBalanced:
    case RoutingDistribution::kUniform: break;
  }
  if (r.per_layer_variation) out += ", per-layer popularity";
  if (r.per_step_variation) out += ", per-step popularity";
  if (r.device_limited_nodes > 0) out += fmt::format(", device-limited to {} nodes", r.device_limited_nodes);
  return out;
}

}  // namespace

std::string format_plan(const Plan& plan) {
  const PlanRequest& req = plan.request;
  const Scenario& b = req.base;
  std::string out;
  std::string gpus;
  for (std::size_t i = 0; i < req.space.gpus.size(); ++i) gpus += (i ? "," : "") + std::to_string(req.space.gpus[i]);
  out += fmt::format("moesim plan · {} on {} × {} GPUs ({}) · seq {} · global batch {} · objective {}\n", b.model.name,
                     b.system.name, gpus, b.system.gpu.name, b.training.seq_length, b.training.global_batch_size,
                     to_string(req.objective));
  std::int64_t rejected = 0;
  for (const auto& r : plan.rejections) rejected += r.count;
  // Every finalist was simulated, also those below the rows shown (--top).
  const std::int64_t simulated = std::min(std::max<std::int64_t>(req.finalists, 0), plan.feasible);
  out += fmt::format("searched {} candidates: {} fit, {} rejected; the best {} by estimate were simulated op by op "
                     "and re-ranked\n",
                     thousands(static_cast<double>(plan.considered)), thousands(static_cast<double>(plan.feasible)),
                     thousands(static_cast<double>(rejected)), simulated);
  if (b.model.is_moe()) {
    // Say which skew the ranking assumed (issue 30): the scenario's, or none given.
    if (b.moe.routing.distribution == RoutingDistribution::kBalanced) {
      out += "routing: ranked under balanced expert loads (the scenario gives no skewed moe.routing; the skew "
             "sensitivity below re-simulates the top rows under log-normal popularity)\n";
    } else {
      out += fmt::format("routing: ranked under the scenario's moe.routing, {} (the estimate prices each MoE layer on "
                         "its expected most loaded EP rank; docs/routing.md)\n",
                         routing_label(b.moe.routing));
    }
  }
  out += "\n";
  out += fmt::format("{:>4}  {:<72} {:<5} {:>9} {:>10} {:>6} {:>9} {:>9}{}\n", "rank", "layout", "fid.", "step s",
                     "tok/s/GPU", "MFU", "peak GiB", "headroom", req.token_budget > 0 ? "  time to budget" : "");
  for (const auto& row : plan.rows) {
    const Result& r = row.result;
    const std::string budget =
        req.token_budget > 0 ? fmt::format("  {:>15}", duration(req.token_budget / r.tokens_per_s)) : std::string();
    // A true tie shares the rank above's step time: "3=".
    const std::string rank = std::to_string(row.rank) + (row.tied ? "=" : "");
    out += fmt::format("{:>4}  {:<72} {:<5} {:>9.3f} {:>10.0f} {:>5.1f}% {:>9.1f} {:>9.1f}{}\n", rank,
                       planner::describe(req, row.estimate.candidate), row.simulated ? "sim" : "est", r.step_time_s,
                       r.tokens_per_s_per_gpu, 100.0 * r.mfu, row.estimate.peak_bytes / kGiB,
                       (r.memory.capacity_bytes - row.estimate.peak_bytes) / kGiB, budget);
  }
  out += "\nwhy:\n";
  for (const auto& line : plan.explanation) out += "  " + line + "\n";
  if (!plan.rejections.empty()) {
    out += "\nrejected (count · reason · first example):\n";
    for (const auto& r : plan.rejections) {
      out += fmt::format("  {:>9}  {:<40} e.g. {}: {}\n", thousands(static_cast<double>(r.count)), r.reason,
                         planner::describe(req, r.example), r.example_detail);
    }
  }
  if (!plan.precision.empty()) {
    out += "\nprecision advice (estimate; speed-up over the winner; the winner's layout, then the best layout that fits):\n";
    for (const auto& a : plan.precision) {
      const std::string speed = a.fits ? fmt::format("{:.2f}×", a.speedup) : std::string("does not fit");
      const std::string best = a.best_present ? fmt::format("best {:.2f}× with {}", a.best_speedup, planner::describe(req, a.best))
                                              : std::string("nothing fits");
      out += fmt::format("  {:<14} {:>12}  {}{}\n", to_string(a.precision), speed, best, a.searched ? " (searched)" : "");
      if (!a.risk.empty()) out += "                 risk: " + a.risk + "\n";
    }
  }
  if (!plan.skew.empty()) {
    out += "\nrouting-skew sensitivity (log-normal expert popularity, every EP rank simulated with its own load; the "
           "change is against the row's step under the routing it was ranked with):\n";
    for (const auto& s : plan.skew) {
      out += fmt::format("  rank {}: σ {:.1f} → step {:.3f} s ({:+.1f} %), worst EP-rank imbalance {:.2f}\n", s.rank,
                         s.sigma, s.step_time_s, 100.0 * s.slowdown, s.max_imbalance);
    }
  }
  if (req.space.gpus.size() > 1) {
    out += fmt::format("\nPareto front over (tokens/s, memory headroom, GPUs): {} points\n", plan.pareto.size());
    for (const auto& p : plan.pareto) {
      out += fmt::format("  {:>6} GPUs  {:>12.0f} tokens/s  headroom {:>6.1f} GiB  {}\n", p.candidate.gpus, p.tokens_per_s,
                         p.headroom_bytes / kGiB, planner::describe(req, p.candidate));
    }
  } else {
    out += fmt::format("\nPareto front over (tokens/s, memory headroom): {} layouts (in the JSON)\n", plan.pareto.size());
  }
  out += "\nheld fixed:\n";
  for (const auto& line : plan.not_searched) out += "  " + line + "\n";
  return out;
}

std::string format_partial_search(const PlanRequest& request, const SearchEvaluation& search, std::int64_t total,
                                  std::int64_t top) {
  std::string out = fmt::format("best layouts of the {} of {} candidates searched ({} fit), by closed-form estimate:\n",
                                thousands(static_cast<double>(search.considered)), thousands(static_cast<double>(total)),
                                thousands(static_cast<double>(search.feasible.size())));
  if (search.feasible.empty()) return out + "  none fits so far\n";
  out += fmt::format("{:>4}  {:<72} {:>9} {:>9}\n", "rank", "layout", "step s", "peak GiB");
  const auto shown = std::min<std::size_t>(search.feasible.size(), static_cast<std::size_t>(std::max<std::int64_t>(top, 1)));
  for (std::size_t i = 0; i < shown; ++i) {
    const CandidateEstimate& e = search.feasible[i];
    out += fmt::format("{:>4}  {:<72} {:>9.3f} {:>9.1f}\n", i + 1, planner::describe(request, e.candidate), e.step_time_s,
                       e.peak_bytes / kGiB);
  }
  return out;
}

}  // namespace moesim::cli
