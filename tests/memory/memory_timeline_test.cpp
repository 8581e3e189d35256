#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "memory/memory_result.hpp"
#include "memory/memory_timeline.hpp"
#include "memory/rank_memory.hpp"
#include "schedule/pipeline_schedule.hpp"
#include "schedule/stage_plan.hpp"

using namespace moesim;
using doctest::Approx;

namespace {

struct Layout {
  std::int64_t gpus = 8, tp = 2, pp = 4, vpp = 1, ep = 1;
  std::int64_t gbs = 16;
};

/// A GPT-3-shaped model cut to `layers` layers; `moe` makes the layers from `first_moe` on MoE
/// layers (8 experts of 4096, top-2), as DeepSeek-style models keep their first layers dense.
model::ModelSpec gpt(std::int64_t layers, bool moe, std::int64_t first_moe = 0) {
  model::ModelSpec m = config::load_model_preset("gpt3-175b");
  m.num_attention_heads = 32;
  m.num_query_groups = 32;
  m.hidden_size = 4096;
  m.kv_channels = 128;
  m.ffn_hidden_size = 4 * 4096;
  m.num_layers = layers;
  if (moe) {
    m.num_moe_experts = 8;
    m.moe_router_topk = 2;
    m.moe_ffn_hidden_size = 4096;
    m.moe_layer_pattern.assign(static_cast<std::size_t>(layers), true);
    for (std::int64_t l = 0; l < first_moe && l < layers; ++l) m.moe_layer_pattern[static_cast<std::size_t>(l)] = false;
  }
  return m;
}

Scenario make(model::ModelSpec m, const Layout& g) {
  Scenario s;
  s.name = "timeline-test";
  s.model = std::move(m);
  s.system = config::load_system_preset("hgx-h100", g.gpus);
  s.training = {2048, 1, g.gbs};
  s.parallel.tp = g.tp;
  s.parallel.pp = g.pp;
  s.parallel.vpp = g.vpp;
  s.parallel.ep = g.ep;
  s.parallel.dp = g.gpus / (g.tp * g.pp);
  s.parallel.sequence_parallel = g.tp > 1;
  validate_layout(s);
  return s;
}

/// DeepSeek-V3 on 1,024 H100, TP2 PP8 VPP4 EP64 (bench/bench_scenarios.hpp): dense and MoE layers
/// mixed, uneven chunks, MTP on the last stage.
Scenario deepseek_v3(std::int64_t pp, std::int64_t vpp) {
  Scenario s;
  s.name = "deepseek-v3";
  s.model = config::load_model_preset("deepseek-v3");
  s.system = config::load_system_preset("hgx-h100", 1024);
  s.training = {4096, 1, 8192};
  s.parallel.tp = 2;
  s.parallel.pp = pp;
  s.parallel.vpp = vpp;
  s.parallel.ep = 64;
  s.parallel.dp = 1024 / (2 * pp);
  s.parallel.sequence_parallel = true;
  validate_layout(s);
  return s;
}

/// The checks every timeline must pass: the pass order, the return to the baseline, and that the
/// cheap peak (timeline_peak) names the same op with the same bytes.
void check_timeline(const Scenario& s, std::int64_t st, const schedule::StageLayers& layers,
                    const memory::MemoryTimeline& t) {
  CAPTURE(st);
  const auto order = schedule::pipeline_order(st, s.parallel.pp, s.parallel.vpp, s.num_microbatches());
  REQUIRE_FALSE(t.points.empty());
  std::int64_t last_pass = 0;
  for (const auto& p : t.points) {
    REQUIRE(p.op.pass >= last_pass);
    last_pass = p.op.pass;
    const auto& pass = order[static_cast<std::size_t>(p.op.pass)];
    CHECK(pass.microbatch == p.op.microbatch);
    CHECK(pass.chunk == p.op.chunk);
    CHECK(pass.backward == p.op.backward);
    CHECK(p.running_bytes >= p.bytes);
    CHECK(p.bytes >= t.baseline_bytes);
  }
  CHECK(last_pass == static_cast<std::int64_t>(order.size()) - 1);
  // After the last backward every saved activation is freed: exactly the baseline again.
  CHECK(t.points.back().bytes == t.baseline_bytes);
  const memory::TimelinePeak fast = memory::timeline_peak(s, st, layers);
  CHECK(fast.bytes == t.peak_bytes());
  CHECK(fast.op == t.points[t.peak_index].op);
  for (std::size_t i = 0; i < t.peak_index; ++i) CHECK(t.points[i].running_bytes < t.peak_bytes());
}

}  // namespace

TEST_CASE("the timeline walks Megatron's pass order layer by layer and returns to the baseline") {
  const Scenario s = make(gpt(8, true, 1), {16, 2, 4, 1, 4, 32});
  const auto stages = schedule::plan_stages(s);
  const memory::MemoryTimeline t = memory::memory_timeline(s, 0, stages[0]);
  check_timeline(s, 0, stages[0], t);
  // Stage 0 holds the embedding and layers 0 (dense) and 1 (MoE): a forward runs them in that
  // order, a backward in reverse.
  REQUIRE(t.points.size() >= 6);
  CHECK(memory::describe(t.points[0].op) == "forward of micro-batch 0, chunk 0, embedding");
  CHECK(memory::describe(t.points[1].op) == "forward of micro-batch 0, chunk 0, layer 0 (dense)");
  CHECK(memory::describe(t.points[2].op) == "forward of micro-batch 0, chunk 0, layer 1 (MoE)");
  CHECK(memory::describe(t.points.back().op) == "backward of micro-batch 15, chunk 0, embedding");
  // Each layer's forward adds exactly its saved activations (× the fragmentation share).
  const double frag = 1.0 + memory::MemoryOptions{}.fragmentation_share;
  CHECK(t.points[1].bytes - t.points[0].bytes ==
        Approx(frag * memory::layer_activation(s, false).total()).scale(0).epsilon(1e-9));
  CHECK(t.points[2].bytes - t.points[1].bytes ==
        Approx(frag * memory::layer_activation(s, true).total()).scale(0).epsilon(1e-9));
  // While the MoE layer runs it also holds its dispatch/combine buffers.
  CHECK(t.points[2].running_bytes - t.points[2].bytes ==
        Approx(frag * memory::layer_working_bytes(s, true, false)).scale(0).epsilon(1e-9));
  CHECK(t.baseline_bytes == Approx(memory::rank_memory(s, 0, stages[0]).total_bytes() -
                                   frag * memory::rank_memory(s, 0, stages[0]).activations_bytes -
                                   frag * memory::rank_memory(s, 0, stages[0]).activation_working_bytes)
                                .scale(0)
                                .epsilon(1e-9));
}

TEST_CASE("1F1B and interleaved: the timeline's peak equals rank_memory's total") {
  // Where every layer of a stage is of one kind, the op at the saved peak holds the stage's largest
  // buffer, so the timeline reaches rank_memory's upper bound exactly.
  struct Case {
    std::string name;
    Scenario s;
  };
  std::vector<Case> cases;
  cases.push_back({"dense 1F1B", make(gpt(8, false), {8, 2, 4, 1, 1, 16})});
  cases.push_back({"dense interleaved, many micro-batches", make(gpt(16, false), {8, 2, 4, 2, 1, 68})});
  cases.push_back({"MoE 1F1B", make(gpt(8, true), {16, 2, 4, 1, 4, 32})});
  cases.push_back({"MoE interleaved", make(gpt(16, true), {16, 2, 4, 2, 4, 128})});
  // One group of pp micro-batches: rank 0's warm-up covers every forward (interleaving needs a multiple of pp).
  cases.push_back({"MoE interleaved, as many micro-batches as stages", make(gpt(16, true), {16, 2, 4, 2, 4, 8})});
  Scenario full = make(gpt(16, true), {16, 2, 4, 2, 4, 80});
  full.recompute.granularity = RecomputeGranularity::kFull;
  cases.push_back({"MoE interleaved, full recompute", full});
  Scenario full_dense = make(gpt(8, false), {8, 2, 4, 1, 1, 16});
  full_dense.recompute.granularity = RecomputeGranularity::kFull;
  cases.push_back({"dense 1F1B, full recompute", full_dense});
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto stages = schedule::plan_stages(c.s);
    for (std::int64_t st = 0; st < c.s.parallel.pp; ++st) {
      const auto& layers = stages[static_cast<std::size_t>(st)];
      CAPTURE(st);
      const memory::MemoryTimeline t = memory::memory_timeline(c.s, st, layers);
      check_timeline(c.s, st, layers, t);
      CHECK(t.peak_bytes() == Approx(memory::rank_memory(c.s, st, layers).total_bytes()).scale(0).epsilon(1e-9));
    }
  }
}

TEST_CASE("uneven chunks on the last stage: the logits are live only in the last chunk's passes") {
  // 18 layers over 8 chunks: the last stage's chunk 0 has 3 layers, its chunk 1 (with the output
  // head) 2. The saved level peaks after a forward of chunk 0, while the logits exist only during
  // chunk 1's passes, so the timeline stays below rank_memory's bound (saved peak + logits), by at
  // most the logits.
  const Scenario s = make(gpt(18, false), {8, 2, 4, 2, 1, 68});
  const auto stages = schedule::plan_stages(s);
  REQUIRE(stages[3].chunks[0].size() == 3);
  REQUIRE(stages[3].chunks[1].size() == 2);
  const memory::MemoryTimeline t = memory::memory_timeline(s, 3, stages[3]);
  const memory::RankMemory r = memory::rank_memory(s, 3, stages[3]);
  const double frag = 1.0 + memory::MemoryOptions{}.fragmentation_share;
  CHECK(t.peak_bytes() < r.total_bytes());
  CHECK(r.total_bytes() - t.peak_bytes() <= frag * memory::logits_bytes(s) * (1.0 + 1e-9));
  CHECK(r.activation_working_bytes == memory::logits_bytes(s));
}

TEST_CASE("mixed dense and MoE layers: the timeline's peak is at most rank_memory's, by at most one buffer") {
  // rank_memory adds the stage's largest one-at-a-time buffer (the MoE kind's) to its largest saved
  // level; the timeline knows which layer runs then. DeepSeek-V3's first three layers are dense, so
  // on stage 0 the op at the saved peak may be a dense layer with smaller buffers.
  for (const auto& layout : {std::pair<std::int64_t, std::int64_t>{8, 4}, {16, 1}}) {
    const std::int64_t pp = layout.first;  // not a structured binding: clang 14 cannot capture those (CAPTURE)
    const std::int64_t vpp = layout.second;
    CAPTURE(pp);
    CAPTURE(vpp);
    Scenario s = deepseek_v3(pp, vpp);
    const auto stages = schedule::plan_stages(s);
    const double frag = 1.0 + memory::MemoryOptions{}.fragmentation_share;
    for (std::int64_t st = 0; st < pp; ++st) {
      const auto& layers = stages[static_cast<std::size_t>(st)];
      const memory::MemoryTimeline t = memory::memory_timeline(s, st, layers);
      check_timeline(s, st, layers, t);
      const memory::RankMemory r = memory::rank_memory(s, st, layers);
      CHECK(t.peak_bytes() <= r.total_bytes() * (1.0 + 1e-12));
      CHECK(r.total_bytes() - t.peak_bytes() <= frag * r.activation_working_bytes * (1.0 + 1e-9));
      // Stages without dense layers have no smaller buffer to fall back on: the two agree.
      bool all_moe = true;
      for (std::int64_t l : layers.layers) all_moe = all_moe && s.model.layer_is_moe(l);
      if (all_moe) CHECK(t.peak_bytes() == Approx(r.total_bytes()).scale(0).epsilon(1e-9));
    }
  }
}

TEST_CASE("where the peak happens: the pp-th forward's last layer on stage 0, the loss on the last stage") {
  // 1F1B, pp 4: stage 0 runs forwards of micro-batches 0-3 before the first backward; the peak is
  // reached while the last layer of the fourth forward runs (the following backward of micro-batch 0
  // holds as much, but the first op to reach the peak names it).
  Scenario s = make(gpt(8, true), {16, 2, 4, 1, 4, 32});
  const auto stages = schedule::plan_stages(s);
  CHECK(memory::describe(memory::timeline_peak(s, 0, stages[0]).op) == "forward of micro-batch 3, chunk 0, layer 1 (MoE)");
  // The last stage holds one micro-batch; its logits (V/t·(2 + 4) B per token) outweigh the MoE
  // buffers, so the output head of the first forward is the peak.
  REQUIRE(memory::logits_bytes(s) > memory::layer_working_bytes(s, true, false));
  CHECK(memory::describe(memory::timeline_peak(s, 3, stages[3]).op) ==
        "forward of micro-batch 0, chunk 0, output head and loss");
  // Full recompute: the backward of the oldest micro-batch rebuilds the last layer on top of the
  // peak of saved inputs.
  s.recompute.granularity = RecomputeGranularity::kFull;
  CHECK(memory::describe(memory::timeline_peak(s, 0, stages[0]).op) ==
        "backward of micro-batch 0, chunk 0, layer 1 (MoE)");
}

TEST_CASE("the cheap peak agrees with the whole timeline over many shapes") {
  for (std::int64_t pp : {2, 3, 4}) {
    for (std::int64_t vpp : {1, 2, 3}) {
      for (std::int64_t m : {1, 3, 4, 9, 40}) {
        if (vpp > 1 && m % pp != 0) continue;  // validate_layout refuses it, as Megatron-Core does
        for (bool full : {false, true}) {
          CAPTURE(pp);
          CAPTURE(vpp);
          CAPTURE(m);
          CAPTURE(full);
          Scenario s = make(gpt(2 * pp * vpp + 1, true, 1), {pp * 2, 2, pp, vpp, 2, m});
          REQUIRE(s.num_microbatches() == m);
          if (full) s.recompute.granularity = RecomputeGranularity::kFull;
          const auto stages = schedule::plan_stages(s);
          for (std::int64_t st = 0; st < pp; ++st) {
            const auto& layers = stages[static_cast<std::size_t>(st)];
            check_timeline(s, st, layers, memory::memory_timeline(s, st, layers));
          }
        }
      }
    }
  }
}

TEST_CASE("memory_result names each stage's peak op") {
  const Scenario s = deepseek_v3(8, 4);
  const auto stages = schedule::plan_stages(s);
  std::vector<std::string> warnings;
  const MemoryResult r = memory::memory_result(s, stages, 1.3, warnings);
  REQUIRE(r.per_stage.size() == 8);
  memory::MemoryOptions skew;
  skew.expert_load_factor = 1.3;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    CAPTURE(i);
    const memory::MemoryTimeline t = memory::memory_timeline(s, static_cast<std::int64_t>(i), stages[i], skew);
    CHECK(r.per_stage[i].peak_op == memory::describe(t.points[t.peak_index].op));
  }
  CHECK(r.per_stage[7].peak_op.find("chunk 3") != std::string::npos);  // the last chunk: MTP and the loss
}
