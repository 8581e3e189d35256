#include "calibrate/proxy/rank_plan.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace moesim::proxy {
namespace {

std::int64_t mlp_in_features(bool gated, std::int64_t ffn) { return (gated ? 2 : 1) * ffn; }

}  // namespace

AttentionWidths attention_widths(const ValidationWorkload& w) {
  AttentionWidths a;
  a.mla = w.kv_lora_rank > 0;
  a.q = w.heads * w.head_dim;
  if (a.mla) {
    a.k = a.q;
    a.v = w.heads * w.v_head_dim;
    a.kv_down = w.kv_lora_rank + w.qk_rope_head_dim;
    a.kv_up = w.heads * (w.head_dim - w.qk_rope_head_dim + w.v_head_dim);
  } else {
    a.k = w.kv_heads * w.head_dim;
    a.v = a.k;
  }
  a.out = w.heads * (a.mla ? w.v_head_dim : w.head_dim);
  return a;
}

LayerParams layer_params(const ValidationWorkload& w) {
  LayerParams p;
  const AttentionWidths a = attention_widths(w);
  const std::int64_t h = w.hidden;
  p.gamma1 = h;
  if (a.mla) {
    if (w.q_lora_rank > 0) {
      p.q_down = w.q_lora_rank * h;
      p.q_norm = w.q_lora_rank;
      p.q_up = a.q * w.q_lora_rank;
    } else {
      p.qkv = a.q * h;
    }
    p.kv_down = a.kv_down * h;
    p.kv_norm = w.kv_lora_rank;
    p.kv_up = a.kv_up * w.kv_lora_rank;
  } else {
    p.qkv = a.qkv() * h;
  }
  p.proj = h * a.out;
  p.gamma2 = h;
  if (w.moe) {
    p.router = w.experts * h;
    p.shared_fc1 = mlp_in_features(w.gated, w.shared_ffn) * h;
    p.shared_fc2 = h * w.shared_ffn;
    p.expert_fc1 = mlp_in_features(w.gated, w.expert_ffn) * h;
    p.expert_fc2 = h * w.expert_ffn;
    p.local_experts = w.experts / w.ep;
  } else {
    p.dense_fc1 = mlp_in_features(w.gated, w.ffn) * h;
    p.dense_fc2 = h * w.ffn;
  }
  return p;
}

RoutingPlan routing_plan(const ValidationWorkload& w, std::int64_t rank, std::int64_t layer, std::int64_t microbatch) {
  const auto& copies = w.routed_copies.at(static_cast<std::size_t>(layer)).at(static_cast<std::size_t>(microbatch));
  const std::int64_t ep = w.ep, local = w.experts / w.ep, me = ep_rank(w, rank);
  const std::int64_t tokens = w.tokens_per_rank, topk = w.topk;
  if (tokens * topk > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("routed_copies: more than 2^31 routed rows per rank");
  }
  if (static_cast<std::int64_t>(copies.size()) != ep) throw std::invalid_argument("routed_copies: not one row per EP rank");
  for (std::int64_t s = 0; s < ep; ++s) {
    const auto& row = copies[static_cast<std::size_t>(s)];
    if (static_cast<std::int64_t>(row.size()) != w.experts) throw std::invalid_argument("routed_copies: not one entry per expert");
    std::int64_t sum = 0;
    for (const std::int64_t c : row) {
      if (c < 0 || c > tokens) throw std::invalid_argument("routed_copies: an entry outside [0, tokens_per_rank]");
      sum += c;
    }
    if (sum != tokens * topk) throw std::invalid_argument("routed_copies: a source row does not sum to tokens x topk");
  }
  RoutingPlan plan;
  plan.send_rows.assign(static_cast<std::size_t>(ep), 0);
  plan.recv_rows.assign(static_cast<std::size_t>(ep), 0);
  plan.expert_tokens.assign(static_cast<std::size_t>(local), 0);
  const auto& mine = copies[static_cast<std::size_t>(me)];
  for (std::int64_t e = 0; e < w.experts; ++e) plan.send_rows[static_cast<std::size_t>(e / local)] += mine[static_cast<std::size_t>(e)];
  for (std::int64_t s = 0; s < ep; ++s) {
    for (std::int64_t j = 0; j < local; ++j) {
      const std::int64_t c = copies[static_cast<std::size_t>(s)][static_cast<std::size_t>(me * local + j)];
      plan.recv_rows[static_cast<std::size_t>(s)] += c;
      plan.expert_tokens[static_cast<std::size_t>(j)] += c;
      plan.received += c;
    }
  }

  // Expert e's copies go to the next mine[e] tokens, cyclically: mine[e] <= tokens, so they are
  // distinct tokens, and the row sums to tokens x topk, so every token is dealt exactly topk copies.
  const auto rows = static_cast<std::size_t>(tokens * topk);
  plan.permute_map.resize(rows);
  plan.unpermute_map.assign(rows, -1);
  std::vector<std::int64_t> slot(static_cast<std::size_t>(tokens), 0);
  std::int64_t next_token = 0;
  std::size_t r = 0;
  for (std::int64_t e = 0; e < w.experts; ++e) {
    for (std::int64_t c = 0; c < mine[static_cast<std::size_t>(e)]; ++c, ++r) {
      const std::int64_t t = next_token;
      next_token = (next_token + 1) % tokens;
      plan.permute_map[r] = static_cast<std::int32_t>(t);
      std::int64_t& s = slot[static_cast<std::size_t>(t)];
      plan.unpermute_map[static_cast<std::size_t>(t * topk + s)] = static_cast<std::int32_t>(r);
      ++s;
    }
  }

  // Received rows arrive peer-major (each peer's rows expert-sorted); the grouped GEMM wants them
  // expert-major, as Megatron's sort_chunks_by_idxs regroups them after the all-to-all.
  if (ep > 1 && local > 1) {
    std::vector<std::int64_t> chunk_start(static_cast<std::size_t>(ep * local));
    std::int64_t at = 0;
    for (std::int64_t s = 0; s < ep; ++s) {
      for (std::int64_t j = 0; j < local; ++j) {
        chunk_start[static_cast<std::size_t>(s * local + j)] = at;
        at += copies[static_cast<std::size_t>(s)][static_cast<std::size_t>(me * local + j)];
      }
    }
    plan.regroup_map.resize(static_cast<std::size_t>(plan.received));
    plan.ungroup_map.resize(static_cast<std::size_t>(plan.received));
    std::size_t out = 0;
    for (std::int64_t j = 0; j < local; ++j) {
      for (std::int64_t s = 0; s < ep; ++s) {
        const std::int64_t c = copies[static_cast<std::size_t>(s)][static_cast<std::size_t>(me * local + j)];
        for (std::int64_t i = 0; i < c; ++i, ++out) {
          const std::int64_t from = chunk_start[static_cast<std::size_t>(s * local + j)] + i;
          plan.regroup_map[out] = static_cast<std::int32_t>(from);
          plan.ungroup_map[static_cast<std::size_t>(from)] = static_cast<std::int32_t>(out);
        }
      }
    }
  }
  return plan;
}

}  // namespace moesim::proxy
