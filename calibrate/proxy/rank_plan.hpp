#pragma once
// The host-side plan of one proxy rank (plain C++, unit-tested without a GPU): parameter counts, and
// for every MoE layer and micro-batch the rows this rank sends and receives in the dispatch, the
// tokens of each local expert, and the index maps of the permute, the post-dispatch regroup and the
// unpermute, built from the workload's routed copies so the runner executes exactly the loads the
// prediction priced.
#include <cstdint>
#include <vector>

#include "record/validation_workload.hpp"

namespace moesim::proxy {

/// Parameters of one layer on one rank: dense (attention, norms, router, shared expert or dense MLP:
/// all-reduced over every DP rank) and expert (the local routed experts: reduced over expert-DP).
struct LayerParams {
  std::int64_t gamma1 = 0, qkv = 0, proj = 0, gamma2 = 0, router = 0, shared_fc1 = 0, shared_fc2 = 0;
  /// Multi-latent attention's projections and latent norms (qkv is then the direct q projection, or 0
  /// with a q latent).
  std::int64_t q_down = 0, q_norm = 0, q_up = 0, kv_down = 0, kv_norm = 0, kv_up = 0;
  std::int64_t dense_fc1 = 0, dense_fc2 = 0;
  std::int64_t expert_fc1 = 0, expert_fc2 = 0;  ///< per local expert
  std::int64_t local_experts = 0;
  [[nodiscard]] std::int64_t dense() const {
    return gamma1 + qkv + q_down + q_norm + q_up + kv_down + kv_norm + kv_up + proj + gamma2 + router + shared_fc1 +
           shared_fc2 + dense_fc1 + dense_fc2;
  }
  [[nodiscard]] std::int64_t expert() const { return local_experts * (expert_fc1 + expert_fc2); }
  [[nodiscard]] std::int64_t total() const { return dense() + expert(); }
};

[[nodiscard]] LayerParams layer_params(const ValidationWorkload& w);

/// Widths of the attention block's tensors per token.
struct AttentionWidths {
  bool mla = false;
  std::int64_t q = 0;        ///< heads × query/key head dim
  std::int64_t k = 0;        ///< key heads × head dim (GQA: kv_heads; MLA: every head)
  std::int64_t v = 0;        ///< value heads × value head dim (GQA: kv_heads; MLA: every head)
  std::int64_t out = 0;      ///< heads × value head dim: the core's output, the output projection's input
  std::int64_t kv_down = 0;  ///< MLA: kv latent + the shared rotary key
  std::int64_t kv_up = 0;    ///< MLA: heads × (non-rotary key dim + value dim)
  [[nodiscard]] std::int64_t qkv() const { return q + k + v; }
};

[[nodiscard]] AttentionWidths attention_widths(const ValidationWorkload& w);

/// One MoE layer and micro-batch as rank `rank` runs it.
struct RoutingPlan {
  std::vector<std::int64_t> send_rows;      ///< [EP peer] routed copies this rank sends (dispatch)
  std::vector<std::int64_t> recv_rows;      ///< [EP peer] copies it receives
  std::vector<std::int64_t> expert_tokens;  ///< [local expert] copies it computes
  std::int64_t received = 0;                ///< sum of recv_rows = sum of expert_tokens
  /// [tokens × topk] permuted row r holds token permute_map[r]; rows sorted by expert (so by peer).
  std::vector<std::int32_t> permute_map;
  /// [tokens × topk] the permuted row of token t's s-th copy, at t·topk + s.
  std::vector<std::int32_t> unpermute_map;
  /// [received] expert-sorted row r comes from received (peer-major) row regroup_map[r]; empty when
  /// the received rows are already expert-sorted (one peer, or one local expert).
  std::vector<std::int32_t> regroup_map;
  /// [received] the inverse: peer-major row r comes from expert-sorted row ungroup_map[r].
  std::vector<std::int32_t> ungroup_map;
};

/// Throws std::invalid_argument when the workload's copies break its promises (row sums, bounds).
[[nodiscard]] RoutingPlan routing_plan(const ValidationWorkload& w, std::int64_t rank, std::int64_t layer,
                                       std::int64_t microbatch);

/// EP rank of a global rank (TP 1: EP groups are consecutive ranks).
[[nodiscard]] inline std::int64_t ep_rank(const ValidationWorkload& w, std::int64_t rank) { return rank % w.ep; }

}  // namespace moesim::proxy
