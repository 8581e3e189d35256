#include "accuracy/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace moesim::accuracy {
namespace {

// The search: a coarse grid over the interval, then two refinements, each over ± one step of the
// previous grid with steps ten times finer.
constexpr int kCoarseSteps = 40;
constexpr int kRefineSteps = 20;
constexpr int kRefinements = 2;

struct Score {
  double mape = 0, bias = 0;
  bool valid = false;
};

Score score(const std::vector<PublishedPoint>& points, Fidelity fidelity) {
  Score s;
  int n = 0;
  for (const PublishedPoint& p : points) {
    const PointOutcome o = predict_point(p, fidelity);
    if (!o.failure.empty()) continue;
    s.mape += std::abs(o.error);
    s.bias += o.speed_error;
    ++n;
  }
  if (n == 0) return s;
  s.mape /= n;
  s.bias /= n;
  s.valid = true;
  return s;
}

}  // namespace

std::string family_of(const PublishedPoint& p) {
  const std::size_t end = p.subgroup.find_first_of("-/");
  return p.subgroup.substr(0, end);
}

hw::HostCosts host_costs_of(const std::vector<FittedConstant>& constants) {
  hw::HostCosts costs;
  for (const FittedConstant& c : constants) costs.set(c.host, c.value);
  return costs;
}

std::vector<PublishedPoint> with_host_costs(std::vector<PublishedPoint> points, const hw::HostCosts& costs) {
  for (PublishedPoint& p : points) p.scenario.host_costs = costs;
  return points;
}

std::vector<FittedConstant> fit_host_constants(const std::vector<PublishedPoint>& points, const FitOptions& options) {
  std::vector<FittedConstant> out;
  for (const auto& entry : hw::kHostKindNames) {
    const hw::HostKind kind = entry.value;
    FittedConstant c;
    c.name = "framework_op_s";
    c.host = kind;
    c.search_from = options.from_s;
    c.search_to = options.to_s;
    c.reference = options.reference.op_seconds(kind);
    const auto k = static_cast<std::size_t>(kind);
    c.reference_source = k < options.reference_sources.size() ? options.reference_sources[k] : std::string();
    std::vector<PublishedPoint> mine;
    for (const PublishedPoint& p : points) {
      if (p.skip_reason.empty() && p.scenario.runtime.host.kind == kind) {
        mine.push_back(p);
        c.points.push_back(p.id);
      }
    }
    auto evaluate = [&](double value) {
      for (PublishedPoint& p : mine) p.scenario.host_costs.set(kind, value);
      return score(mine, options.fidelity);
    };
    // The published reference stays unless a grid value does strictly better: a kind whose points
    // do not depend on it (every run a full-iteration graph) keeps the measured figure.
    double best = c.reference;
    Score best_score = evaluate(best);
    if (best_score.valid) {
      double from = options.from_s, step = (options.to_s - options.from_s) / kCoarseSteps;
      int steps = kCoarseSteps;
      for (int round = 0; round <= kRefinements; ++round) {
        for (int i = 0; i <= steps; ++i) {
          const double v = from + step * i;
          if (v < options.from_s || v > options.to_s) continue;
          const Score sc = evaluate(v);
          // Strictly better only: among equals the reference, then the smaller value, stays.
          if (sc.valid && sc.mape < best_score.mape - 1e-12) {
            best = v;
            best_score = sc;
          }
        }
        from = best - step;
        step /= 10.0;
        steps = kRefineSteps;
      }
      c.resolution = step * 10.0;
    } else {
      c.resolution = 0;
    }
    c.value = best;
    c.mape = best_score.mape;
    c.bias = best_score.bias;
    out.push_back(std::move(c));
  }
  return out;
}

CrossValidation cross_validate(const std::vector<PublishedPoint>& points, const FitOptions& options,
                               Fidelity fidelity) {
  std::map<std::string, int> families;
  for (const PublishedPoint& p : points) {
    if (p.skip_reason.empty()) ++families[family_of(p)];
  }
  CrossValidation cv;
  std::map<std::string, hw::HostCosts> fold_costs;
  for (const auto& [family, count] : families) {
    std::vector<PublishedPoint> others;
    for (const PublishedPoint& p : points) {
      if (p.skip_reason.empty() && family_of(p) != family) others.push_back(p);
    }
    const hw::HostCosts costs = host_costs_of(fit_host_constants(others, options));
    cv.folds.push_back({family, costs, count});
    fold_costs[family] = costs;
  }
  cv.points = points;
  std::vector<PointOutcome> outcomes;
  std::vector<const PublishedPoint*> skipped;
  for (PublishedPoint& p : cv.points) {
    if (!p.skip_reason.empty()) {
      skipped.push_back(&p);
      continue;
    }
    p.scenario.host_costs = fold_costs.at(family_of(p));
    outcomes.push_back(predict_point(p, fidelity));
  }
  cv.report = report_of(std::move(outcomes), std::move(skipped));
  return cv;
}

}  // namespace moesim::accuracy
