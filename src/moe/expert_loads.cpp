#include "moe/expert_loads.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "moe/device_limited.hpp"

namespace moesim::moe {
namespace {

/// Gamma(alpha, 1) by Marsaglia and Tsang (2000), with the alpha < 1 boost U^(1/alpha).
double gamma_draw(RngStream& rng, double alpha) {
  if (alpha < 1.0) {
    double u = rng.uniform();
    while (u <= 0.0) u = rng.uniform();
    return gamma_draw(rng, alpha + 1.0) * std::pow(u, 1.0 / alpha);
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0, v = 0;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (u > 0.0 && std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

/// Binomial(n, p): exact inversion while n·p is small, a rounded normal approximation beyond
/// (its error in the mean and variance is far below the sampling noise that matters here).
std::int64_t binomial_draw(RngStream& rng, std::int64_t n, double p) {
  if (n <= 0 || p <= 0.0) return 0;
  if (p >= 1.0) return n;
  const double mean = static_cast<double>(n) * p;
  if (mean < 30.0) {
    // Inversion: walk the pmf from 0.
    const double q = 1.0 - p;
    double prob = std::pow(q, static_cast<double>(n));
    double cdf = prob;
    const double u = rng.uniform();
    std::int64_t k = 0;
    while (u > cdf && k < n) {
      prob *= (static_cast<double>(n - k) / static_cast<double>(k + 1)) * (p / q);
      cdf += prob;
      ++k;
    }
    return k;
  }
  const double sd = std::sqrt(mean * (1.0 - p));
  const double x = std::round(mean + sd * rng.normal());
  return static_cast<std::int64_t>(std::clamp(x, 0.0, static_cast<double>(n)));
}

/// Normalises weights to probabilities, none above `cap` (water-filling: capped experts keep the
/// cap, the rest share what is left in proportion to their weights).
std::vector<double> capped_probabilities(std::vector<double> w, double cap) {
  std::vector<bool> fixed(w.size(), false);
  std::vector<double> p(w.size(), 0.0);
  double budget = 1.0;
  for (;;) {
    double free_weight = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (!fixed[i]) free_weight += w[i];
    }
    bool changed = false;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (fixed[i]) continue;
      p[i] = free_weight > 0 ? budget * w[i] / free_weight : 0.0;
      if (p[i] > cap) {
        fixed[i] = true;
        p[i] = cap;
        budget -= cap;
        changed = true;
      }
    }
    if (!changed) return p;
  }
}

/// After capping, a histogram whose tokens sit on fewer than topk experts leaves part of the
/// probability with nobody (every expert left under the cap measured 0). Those experts share it
/// evenly: the copies still have to go somewhere, and each stays under the cap (E·cap >= 1).
void spread_remainder(std::vector<double>& p, double cap) {
  const double left = 1.0 - std::accumulate(p.begin(), p.end(), 0.0);
  if (left <= 1e-12) return;
  const auto open = static_cast<double>(std::count_if(p.begin(), p.end(), [cap](double x) { return x < cap; }));
  for (double& x : p) {
    if (x < cap) x += left / open;
  }
}

}  // namespace

ExpertLoadModel::ExpertLoadModel(const RoutingSpec& routing, std::int64_t experts, std::int64_t topk,
                                 std::uint64_t seed, std::int64_t experts_per_domain)
    : routing_(routing),
      experts_(experts),
      topk_(std::max<std::int64_t>(topk, 1)),
      seed_(seed),
      experts_per_domain_(experts_per_domain > 0 ? experts_per_domain : experts) {
  if (experts_ < 1 || topk_ > experts_) {
    throw InternalError(fmt::format("expert loads: need 1 <= topk ({}) <= experts ({})", topk_, experts_));
  }
  if (routing.distribution != RoutingDistribution::kHistogram) return;
  // The loader checked the file against the model; a hand-built scenario may not have.
  if (!routing.histogram || routing.histogram->steps() < 1 || routing.histogram->moe_layers() < 1) {
    throw InternalError("expert loads: histogram routing without a loaded histogram (config::load_routing_histogram)");
  }
  if (routing.histogram->experts != experts_) {
    throw InternalError(fmt::format("expert loads: histogram {} has {} experts, the model {}", routing.histogram->file,
                                    routing.histogram->experts, experts_));
  }
}

std::vector<double> ExpertLoadModel::measured_popularity(std::int64_t layer, std::int64_t step) const {
  const RoutingHistogram& h = *routing_.histogram;
  const std::int64_t moe_layer = h.moe_layer(layer);
  // Measured steps repeat in order: step s of the simulation is measured step s mod S.
  const std::int64_t steps = h.steps();
  const std::int64_t measured_step = ((step % steps) + steps) % steps;
  const auto key = std::make_pair(moe_layer, measured_step);
  auto it = popularity_cache_.find(key);
  if (it != popularity_cache_.end()) return it->second;
  // Shares, capped at 1/topk like the drawn popularities: a token picks an expert at most once, so a
  // real router never exceeds it; a file that does (counts from another top-k) is flattened.
  const double cap = 1.0 / static_cast<double>(topk_);
  std::vector<double> p =
      capped_probabilities(h.tokens[static_cast<std::size_t>(measured_step)][static_cast<std::size_t>(moe_layer)], cap);
  spread_remainder(p, cap);
  return popularity_cache_.emplace(key, std::move(p)).first->second;
}

std::vector<double> ExpertLoadModel::draw_popularity(std::int64_t layer_key, std::int64_t step_key) const {
  const auto n = static_cast<std::size_t>(experts_);
  RngStream rng(seed_, fmt::format("routing/popularity/layer{}/step{}", layer_key, step_key));
  std::vector<double> w(n, 1.0);
  switch (routing_.distribution) {
    case RoutingDistribution::kZipf: {
      // Ranks 1..E get weight rank^−s; which expert holds which rank is a random permutation.
      std::vector<std::size_t> perm(n);
      std::iota(perm.begin(), perm.end(), std::size_t{0});
      for (std::size_t i = n; i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
      for (std::size_t r = 0; r < n; ++r) w[perm[r]] = std::pow(static_cast<double>(r + 1), -routing_.zipf_s);
      break;
    }
    case RoutingDistribution::kLognormal:
      for (double& x : w) x = std::exp(routing_.lognormal_sigma * rng.normal());
      break;
    case RoutingDistribution::kDirichlet:
      for (double& x : w) x = gamma_draw(rng, routing_.dirichlet_alpha);
      break;
    case RoutingDistribution::kBalanced:
    case RoutingDistribution::kUniform:
    case RoutingDistribution::kHistogram:
      break;
  }
  const double cap = 1.0 / static_cast<double>(topk_);
  const std::vector<double> p = capped_probabilities(std::move(w), cap);
  if (routing_.device_limited_nodes <= 0) return p;
  return capped_probabilities(device_limited_popularity(p, experts_per_domain_, routing_.device_limited_nodes), cap);
}

std::vector<double> ExpertLoadModel::popularity(std::int64_t layer, std::int64_t step) const {
  if (routing_.distribution == RoutingDistribution::kHistogram) return measured_popularity(layer, step);
  // Hot experts stay hot across layers and steps unless the scenario asks for variation.
  const std::int64_t layer_key = routing_.per_layer_variation ? layer : 0;
  const std::int64_t step_key = routing_.per_step_variation ? step : 0;
  const auto key = std::make_pair(layer_key, step_key);
  auto it = popularity_cache_.find(key);
  if (it == popularity_cache_.end()) it = popularity_cache_.emplace(key, draw_popularity(layer_key, step_key)).first;
  return it->second;
}

std::vector<double> ExpertLoadModel::expert_tokens(std::int64_t tokens, std::int64_t layer, std::int64_t microbatch,
                                                   std::int64_t step) const {
  const auto n = static_cast<std::size_t>(experts_);
  const double copies = static_cast<double>(tokens * topk_);
  if (balanced()) return std::vector<double>(n, copies / static_cast<double>(experts_));
  const std::vector<double> p = popularity(layer, step);
  if (routing_.distribution == RoutingDistribution::kHistogram) {
    // A measured count already carries the noise of the batch it was measured on; drawing around
    // it again would count that noise twice. The micro-batch gets the measured shares exactly.
    std::vector<double> out(n);
    for (std::size_t e = 0; e < n; ++e) out[e] = p[e] * copies;
    return out;
  }
  // Multinomial(tokens·topk, p) as a chain of conditional binomials, each expert capped at `tokens`.
  RngStream rng(seed_, fmt::format("routing/tokens/layer{}/mb{}/step{}", layer, microbatch, step));
  std::vector<double> out(n, 0.0);
  std::int64_t left = tokens * topk_;
  double p_left = 1.0;
  for (std::size_t e = 0; e < n && left > 0; ++e) {
    const double q = e + 1 == n ? 1.0 : std::clamp(p[e] / p_left, 0.0, 1.0);
    const std::int64_t k = std::min(binomial_draw(rng, left, q), tokens);
    out[e] = static_cast<double>(k);
    left -= k;
    p_left = std::max(p_left - p[e], 1e-300);
  }
  return out;
}

ExpertLoadModel expert_load_model(const Scenario& s, std::int64_t ep_ranks_per_domain) {
  return ExpertLoadModel(s.moe.routing, std::max<std::int64_t>(s.model.num_moe_experts, 1),
                         std::max<std::int64_t>(s.model.moe_router_topk, 1), s.seed,
                         s.model.num_moe_experts / std::max<std::int64_t>(s.parallel.ep, 1) * ep_ranks_per_domain);
}

double apply_capacity(std::vector<double>& expert_tokens, double capacity_factor, bool pad) {
  const double total = std::accumulate(expert_tokens.begin(), expert_tokens.end(), 0.0);
  if (expert_tokens.empty() || total <= 0) return 0.0;
  const double cap = capacity_factor * total / static_cast<double>(expert_tokens.size());
  double dropped = 0;
  for (double& t : expert_tokens) {
    if (t > cap) {
      dropped += t - cap;
      t = cap;
    } else if (pad) {
      t = cap;
    }
  }
  return dropped / total;
}

std::vector<double> rank_loads(const std::vector<double>& expert_tokens, std::int64_t ep) {
  const auto ranks = static_cast<std::size_t>(std::max<std::int64_t>(ep, 1));
  const std::size_t per_rank = expert_tokens.size() / ranks;
  std::vector<double> loads(ranks, 0.0);
  const std::size_t stride = std::max<std::size_t>(per_rank, 1);
  for (std::size_t e = 0; e < expert_tokens.size(); ++e) loads[std::min(e / stride, ranks - 1)] += expert_tokens[e];
  return loads;
}

double imbalance(const std::vector<double>& loads) {
  if (loads.empty()) return 1.0;
  const double total = std::accumulate(loads.begin(), loads.end(), 0.0);
  if (total <= 0) return 1.0;
  return *std::max_element(loads.begin(), loads.end()) / (total / static_cast<double>(loads.size()));
}

}  // namespace moesim::moe
