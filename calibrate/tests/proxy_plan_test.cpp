// The proxy runner's host plan: parameter counts by hand, and the routing maps' invariants on a small
// hand-made workload (every token dealt exactly topk distinct experts, the maps inverse of each other,
// the regroup expert-major) plus the refusals of broken copies.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "calibrate/proxy/rank_plan.hpp"

using namespace moesim;
using namespace moesim::proxy;

namespace {

// 2 EP ranks, 4 experts (2 local each), top-2 over 5 tokens per rank.
ValidationWorkload small_moe() {
  ValidationWorkload w;
  w.gpus = 2;
  w.ep = 2;
  w.dp = 2;
  w.layers = 1;
  w.microbatches = 1;
  w.tokens_per_rank = 5;
  w.hidden = 16;
  w.heads = 4;
  w.kv_heads = 2;
  w.head_dim = 4;
  w.gated = true;
  w.moe = true;
  w.experts = 4;
  w.topk = 2;
  w.expert_ffn = 8;
  w.shared_ffn = 6;
  // Source 0 sends 3+2 to rank 0's experts, 1+4 to rank 1's; source 1 sends 5+0 and 2+3.
  w.routed_copies = {{{{3, 2, 1, 4}, {5, 0, 2, 3}}}};
  return w;
}

}  // namespace

TEST_CASE("layer parameters: attention with GQA, gated experts and a shared expert") {
  const LayerParams p = layer_params(small_moe());
  CHECK(p.qkv == (16 + 2 * 8) * 16);  // q = 4 heads x 4, k and v = 2 groups x 4
  CHECK(p.proj == 16 * 16);
  const AttentionWidths a = attention_widths(small_moe());
  CHECK(a.q == 16);
  CHECK(a.k == 8);
  CHECK(a.v == 8);
  CHECK(a.out == 16);  // the core's output has every query head's values: the projection's input
  CHECK(p.router == 4 * 16);
  CHECK(p.shared_fc1 == 2 * 6 * 16);
  CHECK(p.shared_fc2 == 16 * 6);
  CHECK(p.expert_fc1 == 2 * 8 * 16);
  CHECK(p.expert_fc2 == 16 * 8);
  CHECK(p.local_experts == 2);
  CHECK(p.dense() == 16 + 512 + 256 + 16 + 64 + 192 + 96);
  CHECK(p.expert() == 2 * (256 + 128));
}

TEST_CASE("routing plan: rows sent, received and per local expert") {
  const ValidationWorkload w = small_moe();
  const RoutingPlan r0 = routing_plan(w, 0, 0, 0), r1 = routing_plan(w, 1, 0, 0);
  CHECK(r0.send_rows == std::vector<std::int64_t>{5, 5});
  CHECK(r1.send_rows == std::vector<std::int64_t>{5, 5});
  CHECK(r0.recv_rows == std::vector<std::int64_t>{5, 5});
  CHECK(r0.expert_tokens == std::vector<std::int64_t>{8, 2});
  CHECK(r1.expert_tokens == std::vector<std::int64_t>{3, 7});
  CHECK(r1.received == 10);
}

TEST_CASE("routing plan: every token gets topk distinct experts and the maps invert each other") {
  const ValidationWorkload w = small_moe();
  for (std::int64_t rank = 0; rank < 2; ++rank) {
    const RoutingPlan r = routing_plan(w, rank, 0, 0);
    const auto& mine = w.routed_copies[0][0][static_cast<std::size_t>(rank)];
    REQUIRE(r.permute_map.size() == 10);
    std::vector<std::set<std::int64_t>> experts_of(5);
    std::size_t row = 0;
    for (std::int64_t e = 0; e < 4; ++e) {
      for (std::int64_t c = 0; c < mine[static_cast<std::size_t>(e)]; ++c, ++row) {
        experts_of[static_cast<std::size_t>(r.permute_map[row])].insert(e);
      }
    }
    for (const auto& s : experts_of) CHECK(s.size() == 2);
    for (std::int32_t t = 0; t < 5; ++t) {
      for (int s = 0; s < 2; ++s) {
        const std::int32_t permuted = r.unpermute_map[static_cast<std::size_t>(t * 2 + s)];
        REQUIRE(permuted >= 0);
        CHECK(r.permute_map[static_cast<std::size_t>(permuted)] == t);
      }
    }
  }
}

TEST_CASE("routing plan: the regroup makes received rows expert-major and the ungroup undoes it") {
  const ValidationWorkload w = small_moe();
  const RoutingPlan r = routing_plan(w, 1, 0, 0);
  // Received peer-major: from source 0 expert 2 (1 row), expert 3 (4); from source 1 expert 2 (2), expert 3 (3).
  REQUIRE(r.regroup_map.size() == 10);
  CHECK(r.regroup_map == std::vector<std::int32_t>{0, 5, 6, 1, 2, 3, 4, 7, 8, 9});
  for (std::size_t i = 0; i < r.regroup_map.size(); ++i) {
    CHECK(r.ungroup_map[static_cast<std::size_t>(r.regroup_map[i])] == static_cast<std::int32_t>(i));
  }
  ValidationWorkload one = w;
  one.ep = 1;
  one.gpus = 1;
  one.routed_copies = {{{{3, 2, 1, 4}}}};
  CHECK(routing_plan(one, 0, 0, 0).regroup_map.empty());  // one peer: already expert-sorted
}

TEST_CASE("routing plan: broken copies are refused") {
  ValidationWorkload w = small_moe();
  w.routed_copies[0][0][0][0] = 4;  // row sums to 11, not 10
  CHECK_THROWS_AS((void)routing_plan(w, 0, 0, 0), std::invalid_argument);
  w = small_moe();
  w.routed_copies[0][0][1] = {6, 0, 1, 3};  // 6 copies of one expert among 5 tokens
  CHECK_THROWS_AS((void)routing_plan(w, 0, 0, 0), std::invalid_argument);
  w = small_moe();
  w.routed_copies[0][0].pop_back();
  CHECK_THROWS_AS((void)routing_plan(w, 0, 0, 0), std::invalid_argument);
}

TEST_CASE("layer parameters: multi-latent attention (DeepSeek-V3's shapes)") {
  ValidationWorkload w = small_moe();
  w.hidden = 7168;
  w.heads = 128;
  w.kv_heads = 128;
  w.head_dim = 192;  // 128 non-rotary + 64 rotary
  w.q_lora_rank = 1536;
  w.kv_lora_rank = 512;
  w.qk_rope_head_dim = 64;
  w.v_head_dim = 128;
  const AttentionWidths a = attention_widths(w);
  CHECK(a.mla);
  CHECK(a.q == 128 * 192);
  CHECK(a.v == 128 * 128);
  CHECK(a.out == 128 * 128);
  CHECK(a.kv_down == 512 + 64);
  CHECK(a.kv_up == 128 * (128 + 128));
  const LayerParams p = layer_params(w);
  // DeepSeek-V3's attention: 1536·7168 + 1536 + 24576·1536 + 576·7168 + 512 + 32768·512 + 7168·16384
  // = 187,107,328 parameters (HF safetensors: q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
  // kv_a_layernorm, kv_b_proj, o_proj of one layer).
  CHECK(p.q_down + p.q_norm + p.q_up + p.kv_down + p.kv_norm + p.kv_up + p.proj + p.qkv == 187107328);
}
