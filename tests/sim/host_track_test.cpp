// Issue 28, must-show 2: the host track. The same MoE step with CUDA graphs over its layers is faster
// than eager by the host time the model gives, derived here by hand: one loop over the op program with
// a host clock and a GPU clock (the host issues each op after its host_s; the GPU starts an op when
// the previous one is done and the host has issued it; at a host_sync op the host waits for the GPU),
// against the simulation's event queue and the estimate's max-plus matrices (program/host_gate.hpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "../preset_scenario.hpp"
#include "estimate/step_estimator.hpp"
#include "program/host_gate.hpp"
#include "program/host_ops.hpp"
#include "program/layer_cost.hpp"
#include "schedule/stage_plan.hpp"
#include "schedule/step_shape.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

namespace {

/// Qwen3-30B-A3B (48 MoE layers, 128 experts, 16 per rank) on one HGX H100 node, one stage, EP 8,
/// eight micro-batches, DP gradients reduced after the backward (the same exposed time either way).
Scenario qwen3_on_h100(double framework_op_s) {
  Scenario s = test::preset_scenario("qwen3-30b-a3b host", "qwen3-30b-a3b", "hgx-h100", 8, {4096, 1, 64});
  s.parallel.ep = 8;
  s.parallel.dp = 8;
  s.optimizer.overlap_grad_reduce = false;
  s.optimizer.overlap_param_gather = false;
  s.runtime.host.kind = hw::HostKind::kX86;
  s.host_costs.set(hw::HostKind::kX86, framework_op_s);
  validate_layout(s);
  return s;
}

/// The forward then backward ops of one micro-batch on the only stage, in the order the rank runs them.
std::vector<program::LayerOp> microbatch_ops(const Scenario& s) {
  const program::LayerCostModel lc(s, schedule::step_shape(s));
  const schedule::StageLayers stage = schedule::plan_stages(s).front();
  std::vector<program::OpProgram> units;
  units.push_back(lc.embedding_ops());
  for (const std::int64_t layer : stage.layers) units.push_back(lc.layer(layer).ops);
  units.push_back(lc.output_head_ops());
  std::vector<program::LayerOp> ops;
  for (const auto& u : units) ops.insert(ops.end(), u.forward.begin(), u.forward.end());
  for (auto it = units.rbegin(); it != units.rend(); ++it) ops.insert(ops.end(), it->backward.begin(), it->backward.end());
  return ops;
}

/// By hand: m micro-batches back to back; returns when the GPU is done (both clocks start at 0).
double gated_seconds(const std::vector<program::LayerOp>& ops, std::int64_t microbatches) {
  double host = 0, gpu = 0;
  for (std::int64_t mb = 0; mb < microbatches; ++mb) {
    for (const program::LayerOp& op : ops) {
      if (op.host_sync) host = std::max(host, gpu);
      host += op.host_s;
      gpu = std::max(gpu, host) + op.seconds;
    }
  }
  return gpu;
}

double gpu_seconds(const std::vector<program::LayerOp>& ops, std::int64_t microbatches) {
  double gpu = 0;
  for (const program::LayerOp& op : ops) gpu += op.seconds;
  return gpu * static_cast<double>(microbatches);
}

}  // namespace

TEST_CASE("issue 28: CUDA graphs over the MoE layers save the host time the model derives by hand") {
  // Padded to capacity, so that Megatron-Core may capture whole MoE layers (and nothing syncs).
  Scenario eager = qwen3_on_h100(70e-6);
  eager.moe.capacity_factor = 1.0;
  eager.moe.pad_to_capacity = true;
  Scenario graphed = eager;
  graphed.runtime.cuda_graph = {CudaGraphScope::kLayer};

  const std::int64_t m = eager.num_microbatches();
  const auto eager_ops = microbatch_ops(eager), graphed_ops = microbatch_ops(graphed);
  // The GPU work is the same; only the host side differs.
  CHECK(gpu_seconds(eager_ops, m) == doctest::Approx(gpu_seconds(graphed_ops, m)).epsilon(1e-12));
  double eager_host = 0, graphed_host = 0;
  for (const auto& op : eager_ops) eager_host += op.host_s;
  for (const auto& op : graphed_ops) graphed_host += op.host_s;
  CHECK(graphed_host < 0.1 * eager_host);  // one replay per layer and pass instead of every op
  const double by_hand = gated_seconds(eager_ops, m) - gated_seconds(graphed_ops, m);
  MESSAGE("host per micro-batch: eager " << eager_host * 1e3 << " ms, graphed " << graphed_host * 1e3
                                         << " ms; GPU " << gpu_seconds(eager_ops, 1) * 1e3
                                         << " ms; step saving by hand " << by_hand << " s");
  REQUIRE(by_hand > 0.05 * gated_seconds(eager_ops, m));  // the eager step is host-bound here

  const Result se = sim::simulate_step(eager).result, sg = sim::simulate_step(graphed).result;
  const Result ee = estimate::estimate_step(eager), eg = estimate::estimate_step(graphed);
  CHECK(se.step_time_s - sg.step_time_s == doctest::Approx(by_hand).epsilon(1e-6));
  CHECK(ee.step_time_s - eg.step_time_s == doctest::Approx(by_hand).epsilon(1e-6));
  // The saving is the GPU's wait for the host.
  CHECK(se.breakdown.host_idle - sg.breakdown.host_idle == doctest::Approx(by_hand).epsilon(1e-6));
  CHECK(se.breakdown.compute == doctest::Approx(sg.breakdown.compute).epsilon(1e-9));
}

TEST_CASE("a dropless MoE forward makes the host wait for the GPU: the lead is lost at every read-back") {
  Scenario dropless = qwen3_on_h100(20e-6);  // a host fast enough to keep ahead without the syncs
  Scenario no_sync = dropless;
  no_sync.moe.capacity_factor = 1.0;
  no_sync.moe.pad_to_capacity = true;
  const std::int64_t m = dropless.num_microbatches();
  const auto ops = microbatch_ops(dropless);
  const auto syncs = std::count_if(ops.begin(), ops.end(), [](const program::LayerOp& op) { return op.host_sync; });
  CHECK(syncs == 48);  // one per MoE layer forward, at the dispatch all-to-all
  const Result r = sim::simulate_step(dropless).result;
  const double by_hand = gated_seconds(ops, m) - gpu_seconds(ops, m);
  CHECK(r.breakdown.host_idle == doctest::Approx(by_hand).epsilon(1e-6));
  CHECK(by_hand > 0);
  CHECK(estimate::estimate_step(dropless).breakdown.host_idle == doctest::Approx(by_hand).epsilon(1e-9));
  (void)no_sync;
}

// TE issue #761: under DelayedScaling an FP8 te.Linear takes the host more than twice its BF16 call to
// schedule; current scaling (Megatron's tensorwise, the Megatron-Bridge recipes' FP8) is counted as BF16.
TEST_CASE("FP8 with delayed scaling: a TE linear module costs the host twice its BF16 call; tensorwise as BF16") {
  Scenario bf16 = qwen3_on_h100(70e-6);
  Scenario delayed = bf16;
  delayed.precision = Precision::kFp8;
  delayed.fp8_recipe = Fp8Recipe::kDelayed;
  Scenario tensorwise = delayed;
  tensorwise.fp8_recipe = Fp8Recipe::kTensorwise;
  for (const char* name : {"qkv_proj", "attn_out_proj", "expert_fc1", "expert_fc2", "core_attention", "lm_head",
                           "router_topk", "dispatch"}) {
    CAPTURE(name);
    const program::HostOps b = program::host_ops(name, bf16), d = program::host_ops(name, delayed),
                           t = program::host_ops(name, tensorwise);
    CHECK(t.forward == b.forward);
    CHECK(t.backward == b.backward);
    const std::string_view n = name;
    // The TE module call's 3 units again, forward and (× 1.75) backward; the per-expert launches of the
    // grouped GEMM, the QKV split, attention (BF16), the LM head (not a TE module) and the rest as before.
    const bool te_linear = n == "qkv_proj" || n == "attn_out_proj" || n == "expert_fc1" || n == "expert_fc2";
    CHECK(d.forward - b.forward == doctest::Approx(te_linear ? 3.0 : 0.0));
    CHECK(d.backward - b.backward == doctest::Approx(te_linear ? 3.0 * 1.75 : 0.0));
  }
  // This eager dropless step is host-bound, so the bookkeeping shows in the step and as host idle time.
  const Result rd = estimate::estimate_step(delayed), rt = estimate::estimate_step(tensorwise);
  CHECK(rd.step_time_s > rt.step_time_s);
  CHECK(rd.breakdown.host_idle > rt.breakdown.host_idle);
  CHECK(rd.breakdown.compute == doctest::Approx(rt.breakdown.compute).epsilon(1e-12));
}

TEST_CASE("the trace has a host track with the host's work on it") {
  const Scenario s = qwen3_on_h100(70e-6);
  sim::SimOptions o;
  o.record_timeline = true;
  const auto out = sim::simulate_step(s, o);
  REQUIRE(!out.timeline.processes.empty());
  const auto& tracks = out.timeline.processes.front().tracks;
  const auto host = std::find(tracks.begin(), tracks.end(), "host");
  REQUIRE(host != tracks.end());
  const auto host_track = static_cast<std::int32_t>(host - tracks.begin());
  std::size_t host_events = 0, waits = 0;
  for (const auto& e : out.timeline.events) {
    if (e.track == host_track) ++host_events;
    if (out.timeline.names[e.name] == "wait_for_host") ++waits;
  }
  CHECK(host_events > 1000);
  CHECK(waits > 0);
}

TEST_CASE("host gates compose: a run of ops as one matrix, micro-batches as its power") {
  program::LayerOp a{"a"}, b{"b"}, c{"c"};
  a.seconds = 3e-3;
  a.host_s = 1e-3;
  b.seconds = 1e-3;
  b.host_s = 4e-3;
  c.seconds = 2e-3;
  c.host_s = 0.5e-3;
  c.host_sync = true;
  const std::vector<program::LayerOp> ops{a, b, c};
  const program::HostGate g = program::host_gate(ops);
  // By hand: host 1 → a runs 1..4; host 5 → b runs 5..6; sync: host waits to 6, issues c at 6.5 → 6.5..8.5.
  CHECK(g.gpu_end() == doctest::Approx(8.5e-3));
  CHECK(g.repeated(5).gpu_end() == doctest::Approx(gated_seconds(ops, 5)));
  CHECK(g.repeated(0).gpu_end() == 0);
  CHECK(program::host_gate(std::vector<program::LayerOp>{}).gpu_end() == 0);
}
