#include "moe/expected_skew.hpp"

#include <algorithm>
#include <cmath>

namespace moesim::moe {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
// The integration window reaches this many standard deviations around the rank means: beyond it a
// normal tail holds under 1e-15 of the mass.
constexpr double kTailSds = 8.0;
// Simpson points over the window: the integrand 1 − F(x) is smooth and monotone, and the window is a
// few standard deviations of the hottest ranks wide.
constexpr int kIntervals = 256;

double normal_cdf(double z) { return 0.5 * std::erfc(-z * kInvSqrt2); }
double normal_pdf(double z) { return kInvSqrt2Pi * std::exp(-0.5 * z * z); }

/// P(max_j X_j ≤ x).
double all_below(double x, const std::vector<double>& mean, const std::vector<double>& sd) {
  double f = 1.0;
  for (std::size_t j = 0; j < mean.size() && f > 0.0; ++j) {
    if (sd[j] <= 0.0) {
      if (x < mean[j]) return 0.0;
      continue;
    }
    f *= normal_cdf((x - mean[j]) / sd[j]);
  }
  return f;
}

}  // namespace

double expected_maximum(const std::vector<double>& mean, const std::vector<double>& sd) {
  if (mean.empty()) return 0.0;
  const std::size_t hottest = static_cast<std::size_t>(std::max_element(mean.begin(), mean.end()) - mean.begin());
  // Below L the hottest variable alone is almost surely above x; above H every variable is below.
  const double lo = mean[hottest] - kTailSds * sd[hottest];
  double hi = lo;
  for (std::size_t j = 0; j < mean.size(); ++j) hi = std::max(hi, mean[j] + kTailSds * sd[j]);
  if (hi <= lo) return mean[hottest];  // no noise anywhere: the largest mean
  // A variable whose reach ends below L is below x everywhere in the window (Φ = 1 to 1e-15): only the
  // others enter F. Under skew that is a handful of hot ranks out of the EP group.
  std::vector<double> m, d;
  for (std::size_t j = 0; j < mean.size(); ++j) {
    if (mean[j] + kTailSds * sd[j] < lo) continue;
    m.push_back(mean[j]);
    d.push_back(sd[j]);
  }
  // E[max] = L + ∫_L^H (1 − F(x)) dx, Simpson's rule.
  const double h = (hi - lo) / kIntervals;
  double sum = 0.0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double w = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
    sum += w * (1.0 - all_below(lo + h * i, m, d));
  }
  return lo + sum * h / 3.0;
}

ExpectedRankLoad expected_max_rank_load(const ExpertLoadModel& loads, std::int64_t layer, const SkewQuery& q) {
  ExpectedRankLoad out;
  const std::int64_t experts = loads.experts();
  const std::int64_t ep = std::max<std::int64_t>(q.ep, 1);
  const std::int64_t per_rank = std::max<std::int64_t>(experts / ep, 1);
  const double copies = static_cast<double>(q.routed_tokens * loads.topk());
  const double per_expert = copies / static_cast<double>(experts);
  if (loads.balanced() || copies <= 0) {
    out.expert_factors.assign(static_cast<std::size_t>(per_rank), 1.0);
    return out;
  }
  const std::vector<double> p = loads.popularity(layer);
  const bool noisy = !loads.measured();
  const double cap = q.capacity_factor ? *q.capacity_factor * per_expert : 0.0;
  std::vector<double> mean(p.size()), var(p.size());
  for (std::size_t e = 0; e < p.size(); ++e) {
    double mu = copies * p[e];
    double sd = noisy ? std::sqrt(copies * p[e] * (1.0 - p[e])) : 0.0;
    if (q.capacity_factor) {
      // E[min(X, c)] = μ − E[(X − c)⁺], with E[(X − c)⁺] = σ·φ(a) + (μ − c)·(1 − Φ(a)), a = (c − μ)/σ; the
      // capped copy count keeps the noise below the cap only.
      if (sd > 0) {
        const double a = (cap - mu) / sd;
        mu -= sd * normal_pdf(a) + (mu - cap) * (1.0 - normal_cdf(a));
        sd *= normal_cdf(a);
      } else {
        mu = std::min(mu, cap);
      }
    }
    mean[e] = mu;
    var[e] = sd * sd;
  }
  // Each rank's slots: contiguous experts [j·E/ep, (j+1)·E/ep), as rank_loads sums them, or the
  // placement's, a replica carrying 1/r of its expert's copies (variance 1/r²), as placed_rank_loads.
  // (The contiguous slots are walked in place: the planner prices ~10^5 layouts, each once.)
  const auto for_slots = [&](std::size_t j, auto&& slot) {
    if (q.placement) {
      for (const std::int64_t e : q.placement->slots[j]) {
        slot(static_cast<std::size_t>(e), static_cast<double>(q.placement->replicas[static_cast<std::size_t>(e)]));
      }
      return;
    }
    const auto first = j * static_cast<std::size_t>(per_rank);
    for (std::size_t e = first; e < std::min(mean.size(), first + static_cast<std::size_t>(per_rank)); ++e) slot(e, 1.0);
  };
  std::vector<double> rank_mean(static_cast<std::size_t>(ep), 0.0), rank_sd(static_cast<std::size_t>(ep), 0.0);
  for (std::size_t j = 0; j < rank_mean.size(); ++j) {
    for_slots(j, [&](std::size_t e, double r) {
      rank_mean[j] += mean[e] / r;
      rank_sd[j] += var[e] / (r * r);
    });
  }
  for (double& v : rank_sd) v = std::sqrt(v);
  const double balanced_rank = copies / static_cast<double>(ep);
  const double expected_max = expected_maximum(rank_mean, rank_sd);
  out.max_rank_factor = expected_max / balanced_rank;
  const auto hottest = static_cast<std::size_t>(std::max_element(rank_mean.begin(), rank_mean.end()) - rank_mean.begin());
  const double scale = rank_mean[hottest] > 0 ? expected_max / rank_mean[hottest] : 1.0;
  for_slots(hottest, [&](std::size_t e, double r) { out.expert_factors.push_back(mean[e] / r * scale / per_expert); });
  return out;
}

}  // namespace moesim::moe
