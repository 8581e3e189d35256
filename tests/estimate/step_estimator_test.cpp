#include <doctest/doctest.h>

#include "config/builtin_scenarios.hpp"
#include "config/model_loader.hpp"
#include "config/hw_loader.hpp"
#include "memory/rank_memory.hpp"
#include "schedule/stage_plan.hpp"
#include "estimate/step_estimator.hpp"
#include "report/result_json.hpp"

using namespace moesim;

namespace {
Scenario dense_scenario(std::int64_t gpus, std::int64_t tp, std::int64_t pp, std::int64_t vpp, std::int64_t gbs) {
  Scenario s;
  s.name = "test";
  s.model = config::load_model_preset("llama-3-8b");
  s.system = config::load_system_preset("hgx-h100", gpus);
  s.training = {4096, 1, gbs};
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  s.parallel.vpp = vpp;
  s.parallel.etp = tp;
  s.parallel.dp = gpus / (tp * pp);
  s.parallel.sequence_parallel = tp > 1;
  validate_layout(s);
  return s;
}
double breakdown_sum(const Result& r) {
  const auto& b = r.breakdown;
  return b.compute + b.exposed_comm + b.bubble + b.optimizer + b.host_idle;
}
}  // namespace

TEST_CASE("the breakdown adds up to the step time and the same input gives the same bytes") {
  for (const auto& name : config::builtin_scenario_names()) {
    CAPTURE(name);
    const Scenario s = *config::load_builtin_scenario(name);
    const Result a = estimate::estimate_step(s);
    const Result b = estimate::estimate_step(s);
    CHECK(report::result_to_json_text(a) == report::result_to_json_text(b));
    CHECK(a.step_time_s > 0);
    CHECK(breakdown_sum(a) == doctest::Approx(a.step_time_s).epsilon(1e-9));
    const auto& br = a.breakdown;
    CHECK(br.exposed_comm == doctest::Approx(br.tp_comm + br.cp_comm + br.ep_comm + br.pp_comm + br.dp_comm));
    CHECK(a.tokens_per_s == doctest::Approx(static_cast<double>(s.training.global_batch_size * s.training.seq_length) /
                                            a.step_time_s));
  }
}

TEST_CASE("pipeline bubble: (pp − 1)/vpp stage-passes for identical stages") {
  // 32 layers on 4 stages: embedding and head make the end stages differ, so compare the bubble the
  // estimator reports with the interleaving gain it must show.
  const Result plain = estimate::estimate_step(dense_scenario(32, 1, 4, 1, 32));
  const Result inter = estimate::estimate_step(dense_scenario(32, 1, 4, 2, 32));
  CHECK(plain.breakdown.bubble > 0);
  CHECK(inter.breakdown.bubble < plain.breakdown.bubble);
  CHECK(inter.breakdown.bubble == doctest::Approx(plain.breakdown.bubble / 2).epsilon(0.15));
  // More micro-batches amortise the same bubble.
  const Result more = estimate::estimate_step(dense_scenario(32, 1, 4, 1, 128));
  CHECK(more.breakdown.bubble / more.step_time_s < plain.breakdown.bubble / plain.step_time_s);
  // No pipeline, no bubble beyond rounding.
  const Result none = estimate::estimate_step(dense_scenario(8, 1, 1, 1, 32));
  CHECK(none.breakdown.bubble == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(none.breakdown.pp_comm == 0.0);
}

TEST_CASE("communication appears only where the layout needs it") {
  const Result single = estimate::estimate_step(dense_scenario(1, 1, 1, 1, 8));
  CHECK(single.breakdown.tp_comm == 0.0);
  CHECK(single.breakdown.dp_comm == 0.0);
  CHECK(single.breakdown.ep_comm == 0.0);
  const Result tp8 = estimate::estimate_step(dense_scenario(8, 8, 1, 1, 8));
  CHECK(tp8.breakdown.tp_comm > 0.0);
  const Result dp8 = estimate::estimate_step(dense_scenario(8, 1, 1, 1, 8));
  CHECK(dp8.breakdown.dp_comm > 0.0);
  // Megatron-compatible weights + grads + optimizer: 6 + 12/dp bytes per parameter (bf16 weights,
  // fp32 main grads, distributed optimizer), 18 without the distributed optimizer.
  auto s = dense_scenario(8, 1, 1, 1, 8);
  const Result with_dist = estimate::estimate_step(s);
  const auto& st = with_dist.memory.per_stage.at(0);
  const double params = st.weights_bytes / 2.0;
  CHECK((st.weights_bytes + st.grads_bytes + st.optimizer_bytes) / params == doctest::Approx(6.0 + 12.0 / 8));
  s.optimizer.distributed = false;
  const Result without_dist = estimate::estimate_step(s);
  const auto& st2 = without_dist.memory.per_stage.at(0);
  CHECK((st2.weights_bytes + st2.grads_bytes + st2.optimizer_bytes) / params == doctest::Approx(18.0));
}

TEST_CASE("stage plan spreads layers evenly and puts the extras in the middle") {
  Scenario s = dense_scenario(64, 1, 8, 4, 64);
  s.model.num_layers = 61;
  s.model.moe_layer_pattern.clear();
  const auto stages = schedule::plan_stages(s);
  std::int64_t total = 0;
  for (const auto& st : stages) total += static_cast<std::int64_t>(st.layers.size());
  CHECK(total == 61);
  CHECK(stages.front().has_embedding);
  CHECK(stages.back().has_output_head);
  CHECK(stages.front().layers.front() == 0);
  // 32 chunks of 1 or 2 layers; the first chunk (with the embedding) keeps the smaller share.
  CHECK(stages.front().layers.size() <= stages[3].layers.size());
}

TEST_CASE("in-flight micro-batches follow Megatron's 1F1B and interleaved warm-up") {
  // pp 4, 64 micro-batches (the memory model's count, which every result's memory uses).
  CHECK(memory::inflight_chunk_passes(0, 4, 1, 64) == 4);
  CHECK(memory::inflight_chunk_passes(3, 4, 1, 64) == 1);
  // Rank 0 interleaved over 2 chunks: 2·(pp−1) + (vpp−1)·pp + 1 = 11 chunk passes = 5.5 stage
  // equivalents = pp·(1 + (pp−1)/(pp·vpp)).
  CHECK(memory::inflight_chunk_passes(0, 4, 2, 64) == 11);
}

namespace {
/// A dropless MoE preset on H100 with ep · dp = gpus / pp (TP 1).
Scenario moe_scenario(const char* preset, std::int64_t gpus, std::int64_t gbs, std::int64_t pp, std::int64_t ep) {
  Scenario s;
  s.name = std::string(preset) + " dropless";
  s.model = config::load_model_preset(preset);
  s.system = config::load_system_preset("hgx-h100", gpus);
  s.training = {4096, 1, gbs};
  s.parallel.pp = pp;
  s.parallel.ep = ep;
  s.parallel.dp = gpus / pp;
  validate_layout(s);
  return s;
}
}  // namespace

// moe.host_sync_idle_s: a measured host wait at each MoE layer forward (and recomputed forward), priced
// as its own op and breakdown category (the scenario is built in code: its host is not priced, so the
// measured wait is all the host time there is).
TEST_CASE("moe.host_sync_idle_s prices the host wait at every MoE forward") {
  const Scenario s = moe_scenario("qwen3-30b-a3b", 16, 64, 2, 8);  // 24 MoE layers per stage, 8 micro-batches
  const Result base = estimate::estimate_step(s);
  Scenario priced = s;
  priced.moe.host_sync_idle_s = 0.005;
  const Result r = estimate::estimate_step(priced);
  // The critical stage waits 24 layers × 8 micro-batches × 5 ms.
  CHECK(r.breakdown.host_idle == doctest::Approx(0.96));
  // Both stages' forwards grow by 24 × 5 ms = 0.12 s; 1F1B over 2 stages runs m + pp − 1 = 9 of them
  // one after the other: the step grows by 1.08 s.
  CHECK(r.step_time_s - base.step_time_s == doctest::Approx(1.08).epsilon(1e-6));
  CHECK(r.breakdown.compute == doctest::Approx(base.breakdown.compute));

  Scenario recomputed = priced;  // a recomputed forward reads the counts back again
  recomputed.recompute.granularity = RecomputeGranularity::kFull;
  CHECK(estimate::estimate_step(recomputed).breakdown.host_idle == doctest::Approx(2 * 0.96));

  Scenario padded = priced;  // fixed shapes: nothing to read back
  padded.moe.capacity_factor = 1.0;
  padded.moe.pad_to_capacity = true;
  CHECK(estimate::estimate_step(padded).breakdown.host_idle == 0);
  CHECK(base.breakdown.host_idle == 0);
}
