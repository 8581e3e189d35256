#pragma once
// How many token copies each expert receives: the routing skew that sets the pace of every MoE
// layer. Balanced (exact shares), uniform top-k (multinomial noise only), a per-expert popularity —
// Zipf(s), log-normal(σ), Dirichlet(α) — with multinomial noise around it, or a measured histogram
// (exact measured shares, no noise). Every draw comes from a named stream of the scenario's seed,
// so a run is reproducible.
#include <cstdint>
#include <map>
#include <vector>

#include "scenario/scenario.hpp"

namespace moesim::moe {

class ExpertLoadModel {
 public:
  /// Histogram routing reads `routing.histogram` (the scenario loader sets it; its expert count
  /// must be `experts`). `layer` arguments below are model layer indices (MTP layers after them).
  /// `experts_per_domain`: experts on the EP ranks of one NVLink domain (0: the EP group fits in one),
  /// which `routing.device_limited_nodes` limits a token to.
  ExpertLoadModel(const RoutingSpec& routing, std::int64_t experts, std::int64_t topk, std::uint64_t seed,
                  std::int64_t experts_per_domain = 0);

  /// The probability that a routed copy goes to each expert in `layer` at `step` (sums to 1; no
  /// expert above 1/topk, since a token picks an expert at most once). A drawn popularity passes
  /// through device-limited routing (moe/device_limited.hpp); a measured histogram already did.
  [[nodiscard]] std::vector<double> popularity(std::int64_t layer, std::int64_t step = 0) const;

  /// Copies each expert receives when `tokens` tokens are routed in (layer, micro-batch, step):
  /// sums to tokens·topk, each at most `tokens`. Balanced and histogram routing give exact
  /// (fractional) shares of the popularity; the drawn distributions add multinomial noise.
  [[nodiscard]] std::vector<double> expert_tokens(std::int64_t tokens, std::int64_t layer, std::int64_t microbatch,
                                                  std::int64_t step = 0) const;

  [[nodiscard]] bool balanced() const { return routing_.distribution == RoutingDistribution::kBalanced; }
  /// A measured histogram: its shares are given exactly, with no multinomial noise around them.
  [[nodiscard]] bool measured() const { return routing_.distribution == RoutingDistribution::kHistogram; }
  [[nodiscard]] std::int64_t experts() const { return experts_; }
  [[nodiscard]] std::int64_t topk() const { return topk_; }

 private:
  [[nodiscard]] std::vector<double> draw_popularity(std::int64_t layer_key, std::int64_t step_key) const;
  /// The measured shares of the histogram layer behind model layer `layer` at `step` (steps cycle).
  [[nodiscard]] std::vector<double> measured_popularity(std::int64_t layer, std::int64_t step) const;

  RoutingSpec routing_;
  std::int64_t experts_ = 0, topk_ = 1;
  std::uint64_t seed_ = 0;
  std::int64_t experts_per_domain_ = 0;
  mutable std::map<std::pair<std::int64_t, std::int64_t>, std::vector<double>> popularity_cache_;
};

/// The load model of a scenario, as the simulation draws it and the estimate takes its expectation:
/// the scenario's routing, experts, top-k and seed, and the experts on one NVLink domain's EP ranks
/// (device-limited routing), `ep_ranks_per_domain` being the EP group's members per domain. Draw
/// (layer, micro-batch) of step 0 is `expert_tokens(sp_tokens × ep, layer, microbatch)`, `sp_tokens`
/// being the tokens each EP rank routes per micro-batch and MoE layer (schedule::StepShape).
[[nodiscard]] ExpertLoadModel expert_load_model(const Scenario& s, std::int64_t ep_ranks_per_domain);

/// Caps every expert at capacity_factor × its balanced share (tokens·topk / experts), as Megatron's
/// moe_expert_capacity_factor with the drop policy does; with `pad` (moe_pad_expert_input_to_capacity)
/// every expert then holds exactly that capacity. Returns the fraction of routed copies dropped.
double apply_capacity(std::vector<double>& expert_tokens, double capacity_factor, bool pad = false);

/// Tokens per EP rank with experts placed contiguously (rank j holds experts [j·E/ep, (j+1)·E/ep)).
[[nodiscard]] std::vector<double> rank_loads(const std::vector<double>& expert_tokens, std::int64_t ep);

/// max / mean of a load vector (1 = perfectly balanced; 1 for an all-zero vector).
[[nodiscard]] double imbalance(const std::vector<double>& loads);

}  // namespace moesim::moe
