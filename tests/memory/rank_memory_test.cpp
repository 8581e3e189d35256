#include <doctest/doctest.h>

#include <algorithm>

#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "memory/rank_memory.hpp"
#include "schedule/pipeline_schedule.hpp"
#include "schedule/stage_params.hpp"
#include "schedule/stage_plan.hpp"

using namespace moesim;
using doctest::Approx;

namespace {

struct Grid {
  std::int64_t gpus = 1, tp = 1, pp = 1, vpp = 1, ep = 1, etp = 1;
};

Scenario make_scenario(model::ModelSpec m, const Grid& g, std::int64_t seq, std::int64_t mbs, std::int64_t gbs) {
  Scenario s;
  s.name = "memory-test";
  s.model = std::move(m);
  s.system = config::load_system_preset("hgx-h100", g.gpus);
  s.training = {seq, mbs, gbs};
  s.parallel.tp = g.tp;
  s.parallel.pp = g.pp;
  s.parallel.vpp = g.vpp;
  s.parallel.ep = g.ep;
  s.parallel.etp = g.etp;
  s.parallel.dp = g.gpus / (g.tp * g.pp);
  s.parallel.sequence_parallel = g.tp > 1;
  validate_layout(s);
  return s;
}

/// A GPT of Korthikanti et al. 2022's shape: MHA with a·d = h, GELU MLP of 4h, 16-bit activations.
model::ModelSpec gpt(std::int64_t heads, std::int64_t hidden, std::int64_t layers) {
  model::ModelSpec m = config::load_model_preset("gpt3-175b");
  m.num_attention_heads = heads;
  m.num_query_groups = heads;
  m.hidden_size = hidden;
  m.kv_channels = hidden / heads;
  m.ffn_hidden_size = 4 * hidden;
  m.num_layers = layers;
  return m;
}

void selective(Scenario& s) {
  s.recompute.granularity = RecomputeGranularity::kSelective;
  s.recompute.modules = {RecomputeModule::kCoreAttn};
}

double layer_bytes(const Scenario& s) { return memory::layer_activation(s, false).total(); }

}  // namespace

TEST_CASE("bytes per parameter match Megatron's theoretical_memory_usage.py") {
  // bf16 params + fp32 main grads: 18 without, 6 + 12/d with the distributed optimizer.
  CHECK(memory::bytes_per_param(Precision::kBf16, false, 8).total() == 18.0);
  CHECK(memory::bytes_per_param(Precision::kBf16, true, 8).total() == Approx(6.0 + 12.0 / 8.0).scale(0));
  CHECK(memory::bytes_per_param(Precision::kBf16, true, 1).total() == 18.0);
  // grad_reduce_in_fp32 off: a bf16 main_grad buffer, 4 + 12/DP.
  CHECK(memory::bytes_per_param(Precision::kBf16, true, 8, false).total() == Approx(4.0 + 12.0 / 8.0).scale(0));
  CHECK(memory::bytes_per_param(Precision::kBf16, false, 8, false).total() == 16.0);
  // fp16 params and grads: 20 without, 4 + 16/d with.
  CHECK(memory::bytes_per_param(Precision::kFp16, false, 4).total() == 20.0);
  CHECK(memory::bytes_per_param(Precision::kFp16, true, 4).total() == Approx(4.0 + 16.0 / 4.0).scale(0));
  // store_param_remainders: m, v and a 16-bit remainder beside the bf16 weight — 10 bytes, not 12.
  CHECK(memory::bytes_per_param(Precision::kBf16, true, 8, false, true).optimizer == Approx(10.0 / 8.0).scale(0));
  CHECK(memory::bytes_per_param(Precision::kBf16, false, 8, true, true).total() == 16.0);
}

TEST_CASE("a dense GPT rank holds 18 or 6 + 12/DP bytes per parameter of model state") {
  Scenario s = make_scenario(config::load_model_preset("llama-3-8b"), {16, 2, 2, 1, 1, 2}, 4096, 1, 64);
  const auto stages = schedule::plan_stages(s);
  const auto params = schedule::rank_params(s, stages);
  const double dp = static_cast<double>(s.parallel.dp);
  for (std::int64_t st = 0; st < s.parallel.pp; ++st) {
    CAPTURE(st);
    const double n = params[static_cast<std::size_t>(st)].total();
    s.optimizer.distributed = true;
    const memory::RankMemory with = memory::rank_memory(s, st, stages[static_cast<std::size_t>(st)]);
    CHECK(with.model_state_bytes() == Approx((6.0 + 12.0 / dp) * n).scale(0).epsilon(1e-12));
    s.optimizer.distributed = false;
    const memory::RankMemory without = memory::rank_memory(s, st, stages[static_cast<std::size_t>(st)]);
    CHECK(without.model_state_bytes() == Approx(18.0 * n).scale(0).epsilon(1e-12));
    CHECK(without.low_precision_weight_bytes == 0.0);
  }
}

TEST_CASE("runtime terms: communicators of the groups the model uses, fragmentation of the activations") {
  // Dense llama-3-8b on 16 GPUs, tp 2 pp 2 ⇒ dp 4; etp 2 and edp 4 exist but a dense model never
  // runs a collective on them: tp, dp, pp communicators only.
  const Scenario s = make_scenario(config::load_model_preset("llama-3-8b"), {16, 2, 2, 1, 1, 2}, 4096, 1, 64);
  const auto stages = schedule::plan_stages(s);
  const memory::MemoryOptions opt;
  const memory::RankMemory r = memory::rank_memory(s, 0, stages[0], opt);
  CHECK(r.comm_buffers_bytes == Approx(3.0 * opt.nccl_bytes_per_group).scale(0).epsilon(1e-12));
  CHECK(r.fragmentation_bytes ==
        Approx(opt.fragmentation_share * (r.activations_bytes + r.activation_working_bytes)).scale(0).epsilon(1e-12));
  // The same grid on an MoE model adds the expert groups of more than one rank (ep 2, etp 2, edp 2).
  model::ModelSpec moe = config::load_model_preset("mixtral-8x7b");
  const Scenario m = make_scenario(moe, {16, 2, 2, 1, 2, 2}, 4096, 1, 64);
  const auto moe_stages = schedule::plan_stages(m);
  const memory::RankMemory rm = memory::rank_memory(m, 0, moe_stages[0], opt);
  CHECK(rm.comm_buffers_bytes == Approx(6.0 * opt.nccl_bytes_per_group).scale(0).epsilon(1e-12));
}

TEST_CASE("dense layer activations follow Korthikanti 2022 Table 2 and Megatron's estimator") {
  // s·b·h per layer in bytes; a = 32 heads, t = 4.
  const std::int64_t seq = 2048, mbs = 2, h = 4096, a = 32, t = 4;
  Scenario s = make_scenario(gpt(a, h, 8), {8, t, 2, 1, 1, t}, seq, mbs, 16);
  s.attention_backend = AttentionBackend::kUnfused;
  const double sbh = static_cast<double>(seq * mbs * h);
  const double attn = 5.0 * static_cast<double>(a * seq) / static_cast<double>(h * t);  // 5as/(ht)
  const double td = static_cast<double>(t);

  SUBCASE("TP + SP, no recompute: sbh(34/t + 5as/(ht))") {
    CHECK(layer_bytes(s) == Approx(sbh * (34.0 / td + attn)).scale(0).epsilon(1e-12));
  }
  SUBCASE("TP without SP: sbh(10 + 24/t + 5as/(ht))") {
    s.parallel.sequence_parallel = false;
    CHECK(layer_bytes(s) == Approx(sbh * (10.0 + 24.0 / td + attn)).scale(0).epsilon(1e-12));
  }
  SUBCASE("TP + SP + selective: 34·sbh/t, Megatron's sbh(18 + 4·ffn/h)/t for any ffn") {
    selective(s);
    CHECK(layer_bytes(s) == Approx(sbh * 34.0 / td).scale(0).epsilon(1e-12));
    s.model.ffn_hidden_size = 3 * h;
    CHECK(layer_bytes(s) == Approx(sbh * (18.0 + 4.0 * 3.0) / td).scale(0).epsilon(1e-12));
  }
  SUBCASE("TP + selective without SP: Megatron's compute_activation_memory_without_sp sbh(10 + 24/t)") {
    selective(s);
    s.parallel.sequence_parallel = false;
    CHECK(layer_bytes(s) == Approx(sbh * (10.0 + 24.0 / td)).scale(0).epsilon(1e-12));
  }
  SUBCASE("FlashAttention keeps no s×s tensor: the selective figure without recompute") {
    s.attention_backend = AttentionBackend::kFlash;
    CHECK(layer_bytes(s) == Approx(sbh * 34.0 / td).scale(0).epsilon(1e-12));
  }
  SUBCASE("full recompute keeps the layer input: 2sbh/t with SP, 2sbh without") {
    s.recompute.granularity = RecomputeGranularity::kFull;
    CHECK(layer_bytes(s) == Approx(2.0 * sbh / td).scale(0).epsilon(1e-12));
    s.parallel.sequence_parallel = false;
    CHECK(layer_bytes(s) == Approx(2.0 * sbh).scale(0).epsilon(1e-12));
  }
  SUBCASE("trained without hidden dropout (hidden_dropout 0): no masks, 2 bytes per sbh fewer") {
    selective(s);
    s.model.hidden_dropout = 0.0;
    CHECK(memory::layer_activation(s, false).total() == Approx(sbh * 32.0 / td).scale(0).epsilon(1e-12));
  }
}

TEST_CASE("Korthikanti 2022 models: per-layer activations and the first stage's L layers") {
  // Model configurations: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  // Transformer Models" (arXiv 2205.05198), Table 3: s = 2048, t = 8; (a, h, L, p, global batch,
  // micro-batch). The paper gives activation memory as Table 2's formulas (and as bar charts, Fig. 1
  // and 7), not as numbers; the bytes below are those formulas evaluated for these configurations
  // by hand (python), in bytes per layer per micro-batch.
  struct Row {
    const char* name;
    std::int64_t a, h, layers, pp, gbs, mbs;
    double tp_baseline_bytes;   // sbh(10 + 24/t + 5as/(ht)), Table 2 "tensor parallel (baseline)"
    double sp_bytes;            // sbh(34/t + 5as/(ht)),       Table 2 "tensor + sequence parallel"
    double sp_selective_bytes;  // 34·sbh/t,                   Table 2 "... + selective activation recompute"
  };
  const Row rows[] = {
      {"22B", 64, 6144, 48, 1, 4, 4, 1325400064.0, 884998144.0, 213909504.0},
      {"175B", 96, 12288, 96, 8, 64, 1, 578813952.0, 358612992.0, 106954752.0},
      {"530B", 128, 20480, 105, 35, 280, 1, 880803840.0, 513802240.0, 178257920.0},
      {"1T", 160, 25600, 128, 64, 512, 1, 1101004800.0, 642252800.0, 222822400.0},
  };
  for (const Row& r : rows) {
    CAPTURE(r.name);
    Scenario s = make_scenario(gpt(r.a, r.h, r.layers), {8 * r.pp, 8, r.pp, 1, 1, 8}, 2048, r.mbs, r.gbs);
    s.attention_backend = AttentionBackend::kUnfused;
    s.parallel.sequence_parallel = false;
    CHECK(layer_bytes(s) == Approx(r.tp_baseline_bytes).scale(0).epsilon(1e-9));
    s.parallel.sequence_parallel = true;
    CHECK(layer_bytes(s) == Approx(r.sp_bytes).scale(0).epsilon(1e-9));
    selective(s);
    CHECK(layer_bytes(s) == Approx(r.sp_selective_bytes).scale(0).epsilon(1e-9));

    // §4.4: 1F1B's first stage holds p micro-batches of L/p layers = L layers' worth, plus the
    // embedding's token ids (8 B) and dropout mask (h/t B) per token of each micro-batch.
    const auto stages = schedule::plan_stages(s);
    const memory::RankMemory m0 = memory::rank_memory(s, 0, stages[0]);
    const double sb = 2048.0 * static_cast<double>(r.mbs);
    const double embedding = static_cast<double>(r.pp) * sb * (8.0 + static_cast<double>(r.h) / 8.0);
    CHECK(m0.activations_bytes ==
          Approx(static_cast<double>(r.layers) * r.sp_selective_bytes + embedding).scale(0).epsilon(1e-9));
  }
}

TEST_CASE("1F1B: stage 0 holds pp micro-batches, the last stage one; interleaving adds (pp-1)/(pp·vpp)") {
  const std::int64_t pp = 4, vpp = 2;
  Scenario s = make_scenario(gpt(32, 4096, 16), {8, 2, pp, 1, 1, 2}, 2048, 1, 32);  // m = 16
  auto stages = schedule::plan_stages(s);
  const memory::RankMemory first = memory::rank_memory(s, 0, stages[0]);
  const memory::RankMemory last = memory::rank_memory(s, pp - 1, stages[static_cast<std::size_t>(pp - 1)]);
  CHECK(first.inflight_microbatches == Approx(static_cast<double>(pp)).scale(0).epsilon(1e-12));
  CHECK(last.inflight_microbatches == Approx(1.0).scale(0).epsilon(1e-12));
  const double layers_1f1b = first.activations_bytes;

  // Fewer micro-batches than stages: stage 0 holds all m.
  Scenario few = make_scenario(gpt(32, 4096, 16), {8, 2, pp, 1, 1, 2}, 2048, 1, 2);  // m = 2
  CHECK(memory::rank_memory(few, 0, stages[0]).inflight_microbatches == Approx(2.0).scale(0));

  // Interleaved: warm-up 2(pp−1) + (vpp−1)pp chunk passes + 1 in steady state = pp·vpp + pp − 1
  // chunk passes on rank 0, i.e. pp + (pp−1)/vpp stages' worth: Megatron's factor 1 + (pp−1)/(pp·vpp).
  const memory::RankMemory middle_1f1b = memory::rank_memory(s, 1, stages[1]);
  s.parallel.vpp = vpp;
  stages = schedule::plan_stages(s);
  const std::int64_t passes0 = memory::inflight_chunk_passes(0, pp, vpp, 16);
  CHECK(passes0 == pp * vpp + pp - 1);
  const double factor = 1.0 + static_cast<double>(pp - 1) / static_cast<double>(pp * vpp);
  CHECK(static_cast<double>(passes0) / static_cast<double>(vpp * pp) == Approx(factor).scale(0).epsilon(1e-12));
  CHECK(memory::rank_memory(s, 0, stages[0]).activations_bytes > layers_1f1b);
  // Rank 1 carries no embedding, so its bytes scale exactly with the count: 1F1B holds pp − 1
  // micro-batches, interleaving (2(pp−2) + (vpp−1)pp + 1)/vpp stages' worth (equal chunks of 2 layers).
  const memory::RankMemory middle = memory::rank_memory(s, 1, stages[1]);
  const double expected = (2.0 * (pp - 2) + (vpp - 1) * pp + 1) / static_cast<double>(vpp) / (pp - 1.0);
  CHECK(middle.activations_bytes / middle_1f1b.activations_bytes == Approx(expected).scale(0).epsilon(1e-12));
  CHECK(expected == Approx(1.5).scale(0));
}

TEST_CASE("uneven interleaved chunks: the peak equals a replay of Megatron's pass order") {
  // 18 layers over pp·vpp = 8 chunks: chunk sizes differ, so the count alone is not enough. Many
  // micro-batches make rank_memory skip repeating steady-state periods (memory/pass_walk.hpp); with
  // m = pp rank 0 has no steady state. (Interleaving needs m a multiple of pp: validate_layout.)
  const std::int64_t pp = 4, vpp = 2;
  for (std::int64_t m : {8, 64, 68, 4}) {
    CAPTURE(m);
    Scenario s = make_scenario(gpt(32, 4096, 18), {8, 2, pp, vpp, 1, 2}, 2048, 1, m);
    REQUIRE(s.num_microbatches() == m);
    const auto stages = schedule::plan_stages(s);
    const double per_layer = layer_bytes(s);
    const double embedding = 2048.0 * (8.0 + 4096.0 / 2.0);
    int uneven_ranks = 0;
    for (const auto& st : stages) uneven_ranks += st.chunks[0].size() != st.chunks[1].size() ? 1 : 0;
    REQUIRE(uneven_ranks > 0);  // otherwise this would only repeat the equal-chunk case
    for (std::int64_t rank = 0; rank < pp; ++rank) {
      CAPTURE(rank);
      const auto& st = stages[static_cast<std::size_t>(rank)];
      double chunk_bytes[vpp];
      for (std::int64_t c = 0; c < vpp; ++c) {
        chunk_bytes[c] = per_layer * static_cast<double>(st.chunks[static_cast<std::size_t>(c)].size());
      }
      if (st.has_embedding) chunk_bytes[0] += embedding;
      double level = 0, peak = 0;
      for (const auto& pass : schedule::pipeline_order(rank, pp, vpp, m)) {
        if (!pass.backward) {
          level += chunk_bytes[pass.chunk];
          peak = std::max(peak, level);
        } else {
          level -= chunk_bytes[pass.chunk];
        }
      }
      CHECK(memory::rank_memory(s, rank, st).activations_bytes == Approx(peak).scale(0).epsilon(1e-12));
    }
  }
}

TEST_CASE("hand-worked MoE example (tests/memory/README.md) within 1 %") {
  // 4 layers (layer 0 dense, 1-3 MoE), h 1024, 16 heads of 64, 4 KV groups, SwiGLU, dense ffn 4096,
  // 8 experts of 1024, top-2, vocabulary 32000 untied. 8 H100: tp 2 (SP), pp 2, ep 4, etp 1 ⇒ dp 2,
  // edp 1; s 4096, b 1, global batch 16 ⇒ m 8; bf16, distributed optimizer, FlashAttention.
  model::ModelSpec m = config::load_model_preset("gpt3-175b");
  m.num_layers = 4;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_query_groups = 4;
  m.kv_channels = 64;
  m.ffn_hidden_size = 4096;
  m.gated_linear_unit = true;
  m.vocab_size = 32000;
  m.add_bias_linear = false;
  m.share_embeddings_and_output_weights = false;
  m.num_moe_experts = 8;
  m.moe_router_topk = 2;
  m.moe_ffn_hidden_size = 1024;
  m.moe_layer_pattern = {false, true, true, true};
  const Scenario s = make_scenario(m, {8, 2, 2, 1, 4, 1}, 4096, 1, 16);
  REQUIRE(s.num_microbatches() == 8);
  REQUIRE(s.parallel.edp(s.system.gpus) == 1);
  const auto stages = schedule::plan_stages(s);
  REQUIRE(stages[0].layers == std::vector<std::int64_t>{0, 1});
  REQUIRE(stages[1].layers == std::vector<std::int64_t>{2, 3});

  struct Expected {
    double weights, grads, optimizer, activations, working, comm, context, fragmentation, total;
  };
  const Expected want[] = {
      {63201280.0, 126402560.0, 227352576.0, 298057728.0, 25165824.0, 1073741824.0, 644245094.4, 16161177.6,
       2474328064.0},
      {63219712.0, 126439424.0, 265156608.0, 130220032.0, 393216000.0, 1073741824.0, 644245094.4, 26171801.6,
       2722410496.0},
  };
  for (std::int64_t st = 0; st < 2; ++st) {
    CAPTURE(st);
    const memory::RankMemory r = memory::rank_memory(s, st, stages[static_cast<std::size_t>(st)]);
    const Expected& e = want[st];
    const double rel = 0.01;
    CHECK(r.weights_bytes == Approx(e.weights).scale(0).epsilon(rel));
    CHECK(r.low_precision_weight_bytes == 0.0);
    CHECK(r.gradients_bytes == Approx(e.grads).scale(0).epsilon(rel));
    CHECK(r.optimizer_bytes == Approx(e.optimizer).scale(0).epsilon(rel));
    CHECK(r.activations_bytes == Approx(e.activations).scale(0).epsilon(rel));
    CHECK(r.activation_working_bytes == Approx(e.working).scale(0).epsilon(rel));
    CHECK(r.comm_buffers_bytes == Approx(e.comm).scale(0).epsilon(rel));
    CHECK(r.cuda_context_bytes == Approx(e.context).scale(0).epsilon(rel));
    CHECK(r.fragmentation_bytes == Approx(e.fragmentation).scale(0).epsilon(rel));
    CHECK(r.total_bytes() == Approx(e.total).scale(0).epsilon(rel));
  }
  // The per-layer parts of the README, per micro-batch.
  const memory::LayerActivation dense = memory::layer_activation(s, false);
  const memory::LayerActivation moe = memory::layer_activation(s, true);
  CHECK(dense.attention_bytes == Approx(20971520.0).scale(0).epsilon(0.01));
  CHECK(dense.mlp_bytes == Approx(60817408.0).scale(0).epsilon(0.01));
  CHECK(moe.mlp_bytes == Approx(10551296.0).scale(0).epsilon(0.01));
  CHECK(moe.routed_bytes == Approx(33587200.0).scale(0).epsilon(0.01));

  // FP8 on Hopper: TE caches a rowwise and a transposed FP8 copy (2 B) of the GEMM weights only —
  // layers 2 and 3 of stage 1: attention 1,310,720 + routed experts 6,291,456 each.
  Scenario fp8 = s;
  fp8.precision = Precision::kFp8;
  CHECK(memory::rank_memory(fp8, 1, stages[1]).low_precision_weight_bytes ==
        Approx(2.0 * 2.0 * (1310720.0 + 6291456.0)).scale(0).epsilon(1e-12));

  // Skew: the most-loaded EP rank receives 1.5× the balanced copies; a capacity factor caps it.
  memory::MemoryOptions skew;
  skew.expert_load_factor = 1.5;
  CHECK(memory::layer_activation(s, true, skew).routed_bytes == Approx(1.5 * 33587200.0).scale(0).epsilon(1e-12));
  Scenario capped = s;
  capped.moe.capacity_factor = 1.25;
  CHECK(memory::layer_activation(capped, true, skew).routed_bytes ==
        Approx(1.25 * 33587200.0).scale(0).epsilon(1e-12));
}

TEST_CASE("low-precision weight copies: Hopper FP8 keeps a transpose, Blackwell one layout") {
  CHECK(memory::low_precision_copy_bytes_per_param(Precision::kBf16, "hopper") == 0.0);
  CHECK(memory::low_precision_copy_bytes_per_param(Precision::kFp8, "hopper") == 2.0);
  CHECK(memory::low_precision_copy_bytes_per_param(Precision::kFp8, "blackwell") == 1.0);
  CHECK(memory::low_precision_copy_bytes_per_param(Precision::kMxfp8, "blackwell") ==
        Approx(2.0 * (1.0 + 1.0 / 32.0)).scale(0));
  CHECK(memory::low_precision_copy_bytes_per_param(Precision::kNvfp4, "blackwell") ==
        Approx(2.0 * (0.5 + 1.0 / 16.0)).scale(0));
}

TEST_CASE("full recompute: layer inputs in flight, one layer rebuilt at a time") {
  Scenario s = make_scenario(gpt(32, 4096, 8), {8, 2, 2, 1, 1, 2}, 2048, 1, 16);
  const auto stages = schedule::plan_stages(s);
  const double rebuilt = layer_bytes(s);
  s.recompute.granularity = RecomputeGranularity::kFull;
  const memory::RankMemory r = memory::rank_memory(s, 0, stages[0]);
  CHECK(r.activation_working_bytes == Approx(rebuilt).scale(0).epsilon(1e-12));
  const double inputs = 4.0 * 2.0 * 2048.0 * 4096.0 / 2.0;  // 4 layers × 2sbh/t
  const double embedding = 2048.0 * (8.0 + 4096.0 / 2.0);
  CHECK(r.activations_bytes == Approx(2.0 * (inputs + embedding)).scale(0).epsilon(1e-12));  // pp = 2 in flight
}

TEST_CASE("a stage outside [0, pp) is a caller's bug") {
  Scenario s = make_scenario(gpt(32, 4096, 8), {8, 2, 2, 1, 1, 2}, 2048, 1, 16);
  const auto stages = schedule::plan_stages(s);
  CHECK_THROWS_AS((void)memory::rank_memory(s, 2, stages[0]), InternalError);
}

TEST_CASE("low-precision training saves quantized GEMM inputs: fc1 and fc2 inputs shrink, attention balances") {
  // GPT of h = 4096, 32 heads, GELU 4h, tp 1 (no SP): per token the MLP keeps its norm output (fc1
  // input, h) and GELU output (fc2 input, 4h) at 1 B instead of 2 in FP8; the attention block's QKV
  // input shrinks by h bytes while the output projection adds its FP8 input copy, also h bytes.
  Scenario s = make_scenario(gpt(32, 4096, 8), Grid{8, 1, 1, 1, 1, 1}, 2048, 1, 8);
  const double tokens = 2048.0, h = 4096.0;
  const auto bf16 = memory::layer_activation(s, false);
  s.precision = Precision::kFp8;
  const auto fp8 = memory::layer_activation(s, false);
  CHECK(bf16.attention_bytes == Approx(fp8.attention_bytes).epsilon(1e-12).scale(0));
  CHECK(bf16.mlp_bytes - fp8.mlp_bytes == Approx(tokens * (h + 4.0 * h)).epsilon(1e-12).scale(0));
  s.precision = Precision::kMxfp8;
  const auto mx = memory::layer_activation(s, false);
  CHECK(bf16.mlp_bytes - mx.mlp_bytes == Approx(tokens * 5.0 * h * (2.0 - (1.0 + 1.0 / 32.0))).epsilon(1e-12).scale(0));
}

TEST_CASE("recomputing core attention frees its 16-bit output only where the projection keeps its own copy") {
  // Megatron's checkpointed attention saves q, k, v and recomputes the kernel: its output is not kept
  // for the kernel's backward. In BF16 the output projection saves that same tensor (no change); in
  // FP8 it saves a quantized copy, so the 16-bit output (2 bytes × heads × head_dim per token) goes.
  Scenario s = make_scenario(gpt(32, 4096, 8), Grid{8, 1, 1, 1, 1, 1}, 2048, 1, 8);
  const double tokens = 2048.0, h = 4096.0;
  const auto recompute_core_attn = [](Scenario& sc) {
    sc.recompute.granularity = RecomputeGranularity::kSelective;
    sc.recompute.modules = {RecomputeModule::kCoreAttn};
  };
  Scenario bf16 = s;
  recompute_core_attn(bf16);
  CHECK(memory::layer_activation(bf16, false).attention_bytes == Approx(memory::layer_activation(s, false).attention_bytes).epsilon(1e-12).scale(0));
  s.precision = Precision::kFp8;
  Scenario fp8 = s;
  recompute_core_attn(fp8);
  CHECK(memory::layer_activation(s, false).attention_bytes - memory::layer_activation(fp8, false).attention_bytes ==
        Approx(tokens * 2.0 * h).epsilon(1e-12).scale(0));
}

TEST_CASE("fp8_param_gather drops the 16-bit copy of every GEMM weight; redundant expert slots add weights") {
  const model::ModelSpec mixtral = config::load_model_preset("mixtral-8x7b");
  Scenario s = make_scenario(mixtral, Grid{64, 1, 4, 1, 8, 1}, 4096, 1, 256);
  s.precision = Precision::kFp8;
  const auto stages = schedule::plan_stages(s);
  const auto base = memory::rank_memory(s, 1, stages[1]);
  Scenario g = s;
  g.optimizer.fp8_param_gather = true;
  const auto gathered = memory::rank_memory(g, 1, stages[1]);
  // Stage 1 holds 8 Mixtral layers: everything but the norms and routers is a GEMM weight.
  const double gemm = base.low_precision_weight_bytes / memory::low_precision_copy_bytes_per_param(Precision::kFp8, "hopper");
  CHECK(base.weights_bytes - gathered.weights_bytes == Approx(2.0 * gemm).epsilon(1e-12).scale(0));
  CHECK(gathered.weights_bytes > 0);  // norms and routers stay 16-bit
  CHECK(gathered.low_precision_weight_bytes == base.low_precision_weight_bytes);
  CHECK(gathered.optimizer_bytes == base.optimizer_bytes);

  // bf16 main grads halve the gradient buffer and touch nothing else.
  Scenario bf16_grads = s;
  bf16_grads.optimizer.grad_reduce_in_fp32 = false;
  const auto halved = memory::rank_memory(bf16_grads, 1, stages[1]);
  CHECK(halved.gradients_bytes == Approx(base.gradients_bytes / 2.0).epsilon(1e-12).scale(0));
  CHECK(halved.weights_bytes == base.weights_bytes);
  CHECK(halved.optimizer_bytes == base.optimizer_bytes);

  // --fp4-param-gather in NVFP4 drops the 16-bit copy as fp8_param_gather does in FP8.
  Scenario nv = s;
  nv.precision = Precision::kNvfp4;
  nv.system.gpu.architecture = "blackwell";
  const auto nv_base = memory::rank_memory(nv, 1, stages[1]);
  nv.optimizer.fp4_param_gather = true;
  const auto nv_gathered = memory::rank_memory(nv, 1, stages[1]);
  CHECK(nv_base.weights_bytes - nv_gathered.weights_bytes == Approx(2.0 * gemm).epsilon(1e-12).scale(0));

  // EPLB with 8 redundant experts over EP8 (moe.placement): one more expert slot per rank, i.e. one
  // more expert of each of the stage's 8 MoE layers, with its weights, low-precision copy, gradient
  // buffer and (sharded over expert-DP, as the expert's own) optimizer state.
  Scenario eplb = s;
  eplb.moe.placement.strategy = PlacementStrategy::kEplb;
  eplb.moe.placement.redundant_experts = 8;
  const auto replicated = memory::rank_memory(eplb, 1, stages[1]);
  const double per_expert = 3.0 * 4096.0 * 14336.0;  // SwiGLU: gate, up, down
  const double slot = 8.0 * per_expert;
  const double adam = memory::bytes_per_param(Precision::kFp8, true, static_cast<double>(s.parallel.edp(64)), true, false)
                          .optimizer;
  CHECK(replicated.weights_bytes - base.weights_bytes == Approx(2.0 * slot).epsilon(1e-12).scale(0));
  CHECK(replicated.gradients_bytes - base.gradients_bytes == Approx(4.0 * slot).epsilon(1e-12).scale(0));
  CHECK(replicated.low_precision_weight_bytes - base.low_precision_weight_bytes == Approx(2.0 * slot).epsilon(1e-12).scale(0));
  CHECK(replicated.optimizer_bytes - base.optimizer_bytes == Approx(adam * slot).epsilon(1e-12).scale(0));
  CHECK(replicated.expert_params - base.expert_params == Approx(slot).epsilon(1e-12).scale(0));
}
