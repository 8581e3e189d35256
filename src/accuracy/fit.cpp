#include "accuracy/fit.hpp"

#include <cmath>
#include <map>
#include <utility>

namespace moesim::accuracy {
namespace {

// The search per constant: a grid over its interval, then two refinements, each over ± one step of the
// previous grid with steps ten times finer.
constexpr int kCoarseSteps = 20;
constexpr int kRefineSteps = 20;
constexpr int kRefinements = 2;

struct Score {
  double mape = 0, bias = 0;
  bool valid = false;
};

Score score(const std::vector<PublishedPoint>& points, const std::vector<std::size_t>& subset, Fidelity fidelity) {
  Score s;
  int n = 0;
  for (const std::size_t i : subset) {
    const PointOutcome o = predict_point(points[i], fidelity);
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

void apply(PublishedPoint& p, const FittedConstant& c, double value) {
  if (c.name == kFrameworkOpSeconds) {
    p.scenario.host_costs.set(c.host, value);
  } else if (p.scenario.system.gpu.architecture == c.architecture) {
    p.scenario.system.gpu.sustained_tensor_rate = value;
  }
}

}  // namespace

FitOptions project_fit_options(const std::vector<FittedConstant>& references) {
  FitOptions o;
  auto reference = [&](FittedConstant c) {
    for (const FittedConstant& r : references) {
      const bool same = r.name == c.name && (c.name == kFrameworkOpSeconds ? r.host == c.host : r.architecture == c.architecture);
      if (!same) continue;
      c.reference = r.reference;
      c.reference_source = r.reference_source;
    }
    const bool host = c.name == kFrameworkOpSeconds;
    c.search_from = host ? o.host_from_s : o.rate_from;
    c.search_to = host ? o.host_to_s : o.rate_to;
    c.value = c.reference;
    o.constants.push_back(std::move(c));
  };
  for (const auto& entry : hw::kHostKindNames) {
    FittedConstant c;
    c.name = kFrameworkOpSeconds;
    c.host = entry.value;
    reference(c);
  }
  FittedConstant blackwell;
  blackwell.name = kSustainedTensorRate;
  blackwell.architecture = "blackwell";
  blackwell.reference = 1.0;
  reference(blackwell);
  return o;
}

std::string family_of(const PublishedPoint& p) {
  const std::size_t end = p.subgroup.find_first_of("-/");
  return p.subgroup.substr(0, end);
}

bool depends_on(const PublishedPoint& p, const FittedConstant& c) {
  if (c.name == kFrameworkOpSeconds) return p.scenario.runtime.host.kind == c.host;
  return p.scenario.system.gpu.architecture == c.architecture;
}

void apply_constants(std::vector<PublishedPoint>& points, const std::vector<FittedConstant>& constants) {
  for (PublishedPoint& p : points) {
    for (const FittedConstant& c : constants) apply(p, c, c.value);
  }
}

std::vector<FittedConstant> fit_constants(const std::vector<PublishedPoint>& points, const FitOptions& options) {
  std::vector<PublishedPoint> work;
  for (const PublishedPoint& p : points) {
    if (p.skip_reason.empty()) work.push_back(p);
  }
  std::vector<FittedConstant> constants = options.constants;
  // Every search starts from the references, whatever the built-in file holds today.
  for (FittedConstant& c : constants) c.value = c.reference;
  apply_constants(work, constants);
  std::vector<std::vector<std::size_t>> subsets(constants.size());
  for (std::size_t k = 0; k < constants.size(); ++k) {
    constants[k].points.clear();
    for (std::size_t i = 0; i < work.size(); ++i) {
      if (!depends_on(work[i], constants[k])) continue;
      subsets[k].push_back(i);
      constants[k].points.push_back(work[i].id);
    }
  }
  auto evaluate = [&](std::size_t k, double value) {
    for (const std::size_t i : subsets[k]) apply(work[i], constants[k], value);
    return score(work, subsets[k], options.fidelity);
  };
  for (int round = 0; round < options.rounds; ++round) {
    for (std::size_t k = 0; k < constants.size(); ++k) {
      FittedConstant& c = constants[k];
      // The current value stays unless a grid value does strictly better (ties: the smaller one), so a
      // constant no point depends on keeps its published reference.
      double best = c.value;
      Score best_score = evaluate(k, best);
      if (best_score.valid) {
        double from = c.search_from, step = (c.search_to - c.search_from) / kCoarseSteps;
        int steps = kCoarseSteps;
        for (int refinement = 0; refinement <= kRefinements; ++refinement) {
          for (int i = 0; i <= steps; ++i) {
            const double v = from + step * i;
            if (v < c.search_from || v > c.search_to) continue;
            const Score sc = evaluate(k, v);
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
      }
      c.value = best;
      evaluate(k, best);  // leave the points at the chosen value for the next constant
    }
  }
  for (std::size_t k = 0; k < constants.size(); ++k) {
    const Score s = score(work, subsets[k], options.fidelity);
    constants[k].mape = s.mape;
    constants[k].bias = s.bias;
  }
  return constants;
}

CrossValidation cross_validate(const std::vector<PublishedPoint>& points, const FitOptions& options,
                               Fidelity fidelity) {
  std::map<std::string, int> families;
  for (const PublishedPoint& p : points) {
    if (p.skip_reason.empty()) ++families[family_of(p)];
  }
  CrossValidation cv;
  std::map<std::string, std::vector<FittedConstant>> fold_constants;
  for (const auto& [family, count] : families) {
    std::vector<PublishedPoint> others;
    for (const PublishedPoint& p : points) {
      if (p.skip_reason.empty() && family_of(p) != family) others.push_back(p);
    }
    std::vector<FittedConstant> fitted = fit_constants(others, options);
    cv.folds.push_back({family, fitted, count});
    fold_constants[family] = std::move(fitted);
  }
  cv.points = points;
  std::vector<PointOutcome> outcomes;
  std::vector<const PublishedPoint*> skipped;
  for (PublishedPoint& p : cv.points) {
    if (!p.skip_reason.empty()) {
      skipped.push_back(&p);
      continue;
    }
    for (const FittedConstant& c : fold_constants.at(family_of(p))) apply(p, c, c.value);
    outcomes.push_back(predict_point(p, fidelity));
  }
  cv.report = report_of(std::move(outcomes), std::move(skipped));
  return cv;
}

}  // namespace moesim::accuracy
