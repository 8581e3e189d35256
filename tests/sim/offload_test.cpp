// Issue 28, must-show 5 (second part) and item 7: activation offloading lowers a stage's memory by the
// bytes it moves and costs the host-link time its layers do not hide; optimizer offloading moves the
// state's share to the host and steps it there. Every figure below is derived by hand from the
// scenario (Mixtral-8x7B on one HGX H100 node, EP 8, one stage).
#include <doctest/doctest.h>

#include <algorithm>

#include "../preset_scenario.hpp"
#include "estimate/step_estimator.hpp"
#include "memory/memory_result.hpp"
#include "memory/rank_memory.hpp"
#include "program/layer_cost.hpp"
#include "schedule/stage_plan.hpp"
#include "schedule/step_shape.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;
using doctest::Approx;

namespace {

/// Mixtral-8x7B (32 MoE layers, 8 experts, top-2, h 4096, expert FFN 14336), bf16, 8 H100, EP 8,
/// one pipeline stage, 8 micro-batches of 4096 tokens.
Scenario mixtral_on_h100() {
  Scenario s = test::preset_scenario("mixtral offload", "mixtral-8x7b", "hgx-h100", 8, {4096, 1, 64});
  s.parallel.ep = 8;
  s.parallel.dp = 8;
  validate_layout(s);
  return s;
}

constexpr double kTokens = 4096, kHidden = 4096, kExpertFfn = 14336, kTopk = 2;

}  // namespace

TEST_CASE("activation offloading moves expert_fc1's and moe_act's inputs: bytes by hand") {
  Scenario s = mixtral_on_h100();
  s.offload.activations = {OffloadModule::kExpertFc1, OffloadModule::kMoeAct};
  validate_layout(s);
  // Routed copies on a rank: tokens · top-k (EP spreads 8 experts over 8 ranks, balanced). Per copy
  // the fc1 input (h, bf16) and the SwiGLU input (2·f, bf16).
  const double expected = kTokens * kTopk * (2.0 * kHidden + 2.0 * 2.0 * kExpertFfn);
  const auto off = memory::layer_offload(s, true);
  CHECK(off.routed_bytes == Approx(expected).epsilon(1e-12));
  CHECK(off.attention_bytes == 0.0);
  CHECK(off.mlp_bytes == 0.0);
  // Dense layers have no experts to offload; a model without offloading moves nothing.
  CHECK(memory::layer_offload(s, false).total() == 0.0);
  CHECK(memory::layer_offload(mixtral_on_h100(), true).total() == 0.0);
}

TEST_CASE("activation offloading lowers the stage's saved activations by the bytes it moves") {
  const Scenario base = mixtral_on_h100();
  Scenario off = base;
  off.offload.activations = {OffloadModule::kExpertFc1, OffloadModule::kMoeAct};
  const auto stages = schedule::plan_stages(base);
  const memory::RankMemory before = memory::rank_memory(base, 0, stages.front());
  const memory::RankMemory after = memory::rank_memory(off, 0, stages.front());
  const double moved_per_layer = memory::layer_offload(off, true).total();
  // One stage, 1F1B with pp 1: one micro-batch in flight, 32 MoE layers saved.
  CHECK(before.inflight_microbatches == 1.0);
  CHECK(before.activations_bytes - after.activations_bytes == Approx(32.0 * moved_per_layer).epsilon(1e-9));
  // One layer's offloaded tensors stay on the GPU while they are copied (forward) or prefetched
  // (backward): a layer's one-at-a-time buffers grow by that much.
  CHECK(memory::layer_working_bytes(off, true, true) - memory::layer_working_bytes(base, true, true) ==
        Approx(moved_per_layer).epsilon(1e-9));
  CHECK(after.model_state_bytes() == before.model_state_bytes());
  // The stage's peak (per-op timeline) sits at the output head's forward, where the logits (4096 ×
  // 32000 × (2 + 4) B = 786 MB) outweigh a layer's held-back copy (537 MB): it drops by all 32 layers'
  // offloaded bytes, × 1.05 (the allocator's fragmentation share of activations, docs/memory.md).
  std::vector<std::string> warnings;
  const double peak_before = memory::memory_result(base, stages, 1.0, warnings).peak_bytes;
  const double peak_after = memory::memory_result(off, stages, 1.0, warnings).peak_bytes;
  CHECK(peak_before - peak_after == Approx(32.0 * moved_per_layer * 1.05).epsilon(1e-6));
}

TEST_CASE("activation offloading costs the host-link time the layer does not hide, in both fidelities") {
  Scenario s = mixtral_on_h100();
  s.offload.activations = {OffloadModule::kExpertFc1, OffloadModule::kMoeAct};
  const program::LayerCostModel lc(s, schedule::step_shape(s));
  const auto& layer = lc.layer(0).ops;
  const auto is = [](const char* name) {
    return [name](const program::LayerOp& op) { return std::string_view(op.name) == name; };
  };
  const auto offload = std::find_if(layer.forward.begin(), layer.forward.end(), is("activation_offload"));
  const auto reload = std::find_if(layer.backward.begin(), layer.backward.end(), is("activation_reload"));
  REQUIRE(offload != layer.forward.end());
  REQUIRE(reload != layer.backward.end());
  const double bytes = memory::layer_offload(s, true).total();
  CHECK(offload->bytes == bytes);
  // By hand: the copy takes bytes / 52.8 GB/s (PCIe Gen5, topologies/systems/hgx-h100.json); the
  // layer's forward (everything before the offload op) hides that much of it.
  const double copy_s = bytes / 52.8e9;
  double forward_s = 0, backward_s = 0;
  for (auto it = layer.forward.begin(); it != offload; ++it) forward_s += it->seconds;
  for (const auto& op : layer.backward) backward_s += &op == &*reload ? 0.0 : op.seconds;
  CHECK(offload->seconds == Approx(std::max(0.0, copy_s - forward_s)).epsilon(1e-12));
  CHECK(reload->seconds == Approx(std::max(0.0, copy_s - backward_s)).epsilon(1e-12));
  CHECK(offload->seconds > 0.0);  // 537 MB per layer over PCIe outlasts a layer's forward

  // The step: 8 micro-batches × 32 layers of exposed copies, in offload_comm, and the step is longer
  // by about as much (the estimate prices exactly that; the simulation runs the same ops).
  const double per_microbatch = 32.0 * (offload->seconds + reload->seconds);
  const Result base_est = estimate::estimate_step(mixtral_on_h100());
  const Result est = estimate::estimate_step(s);
  CHECK(est.breakdown.offload_comm == Approx(8.0 * per_microbatch).epsilon(1e-9));
  CHECK(est.step_time_s - base_est.step_time_s == Approx(8.0 * per_microbatch).epsilon(0.05));
  const Result sim = sim::simulate_step(s).result;
  CHECK(sim.breakdown.offload_comm == Approx(8.0 * per_microbatch).epsilon(1e-6));
  CHECK(sim.memory.peak_bytes < sim::simulate_step(mixtral_on_h100()).result.memory.peak_bytes);
}

TEST_CASE("optimizer offloading keeps its share of the state on the host and steps it there") {
  const Scenario base = mixtral_on_h100();
  Scenario half = base;
  half.offload.optimizer_fraction = 0.5;
  const auto stage = schedule::plan_stages(base).front();
  const auto before = memory::rank_memory(base, 0, stage);
  const auto after = memory::rank_memory(half, 0, stage);
  CHECK(after.optimizer_bytes == Approx(0.5 * before.optimizer_bytes).epsilon(1e-12));
  CHECK(after.weights_bytes == before.weights_bytes);
  CHECK(after.gradients_bytes == before.gradients_bytes);
  // The host's half runs beside the GPU's and is slower (PCIe and DDR5 against HBM3): the step grows.
  const Result b = estimate::estimate_step(base), h = estimate::estimate_step(half);
  CHECK(h.breakdown.optimizer > b.breakdown.optimizer);
}
