// Combined 1F1B (moe.a2a_overlap): which passes pair up, and what a paired MoE layer's all-to-alls
// hide, checked by hand on a made-up layer (program/ep_overlap.hpp states the phase pairing).
#include <doctest/doctest.h>

#include "config/hw_loader.hpp"
#include "program/ep_overlap.hpp"

using namespace moesim;
using program::LayerOp;
using program::OpKind;
using program::OpPhase;

namespace {
LayerOp kernel(const char* name, double s, OpPhase phase) { return {name, OpKind::kCompute, phase, s, 0, 0, 0}; }
LayerOp ep(const char* name, double s, double latency, OpPhase phase) {
  LayerOp op{name, OpKind::kEpComm, phase, s, latency, 0, 0};
  op.group = program::CommGroup::kEp;
  return op;
}

// Forward: attention 3 | dispatch 1 | experts 2 | combine 1.5 | unpermute 0.5  (A_F = 3.5)
// Backward: unpermute 0.5 | combine 1 | experts 4 | dispatch 2 | attention 6   (A_B = 6.5)
program::OpProgram made_up_layer(double latency = 0) {
  program::OpProgram p;
  p.forward = {kernel("attention", 3, OpPhase::kForward), ep("dispatch", 1, latency, OpPhase::kForward),
               kernel("expert_fc1", 2, OpPhase::kForward), ep("combine", 1.5, latency, OpPhase::kForward),
               kernel("unpermute", 0.5, OpPhase::kForward)};
  p.backward = {kernel("unpermute", 0.5, OpPhase::kBackward), ep("combine", 1, latency, OpPhase::kBackward),
                kernel("expert_fc1", 4, OpPhase::kDgrad), ep("dispatch", 2, latency, OpPhase::kBackward),
                kernel("attention", 6, OpPhase::kBackward)};
  return p;
}
}  // namespace

TEST_CASE("a paired MoE layer hides min(compute, all-to-all) in each of the four phases") {
  const auto p = made_up_layer();
  const auto s = program::ep_pair_saving(p, 0.0);
  CHECK(s.dispatch_forward == 1.0);   // D_F = 1 beside M_B = 4
  CHECK(s.combine_forward == 1.5);    // C_F = 1.5 beside A_B = 6.5
  CHECK(s.combine_backward == 1.0);   // C_B = 1 beside A_F = 3.5
  CHECK(s.dispatch_backward == 2.0);  // D_B = 2 beside M_F = 2
  CHECK(program::ep_hidden_seconds(s, p.forward[1]) == 1.0);
  CHECK(program::ep_hidden_seconds(s, p.backward[3]) == 2.0);
  CHECK(program::ep_hidden_seconds(s, p.forward[0]) == 0.0);

  // The dispatch kernels hold a quarter of the SMs: compute beside them runs at 3/4 speed, so a
  // phase hides min(c, 0.75·e).
  const auto q = program::ep_pair_saving(p, 0.25);
  CHECK(q.dispatch_forward == 0.75);
  CHECK(q.combine_forward == 1.125);
  CHECK(q.combine_backward == 0.75);
  CHECK(q.dispatch_backward == 1.5);

  // The size-independent latency stays exposed.
  const auto l = program::ep_pair_saving(made_up_layer(0.1), 0.0);
  CHECK(l.dispatch_forward == doctest::Approx(0.9).epsilon(1e-12));
  CHECK(l.dispatch_backward == doctest::Approx(1.9).epsilon(1e-12));

  // A layer without all-to-alls (EP 1, or a dense layer) hides nothing.
  program::OpProgram dense;
  dense.forward = {kernel("fc1", 2, OpPhase::kForward)};
  dense.backward = {kernel("fc1", 4, OpPhase::kDgrad)};
  CHECK(program::ep_pair_saving(dense, 0.0).forward() == 0.0);
}

TEST_CASE("combined 1F1B pairs neighbouring passes of different micro-batches") {
  SUBCASE("no pipelining: F0 alone, (B0 F1), (B1 F2), (B2 F3), B3 alone") {
    const auto order = schedule::pipeline_order(0, 1, 1, 4);
    const auto partner = program::combined_partners(order);
    CHECK(program::combined_pairs(order) == 3);
    CHECK(partner.front() == -1);
    CHECK(partner.back() == -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (partner[i] < 0) continue;
      const auto& other = order[static_cast<std::size_t>(partner[i])];
      CHECK(other.backward != order[i].backward);
      CHECK(other.microbatch != order[i].microbatch);
    }
  }
  SUBCASE("interleaved: warm-up forwards and cool-down backwards run alone") {
    const std::int64_t pp = 4, vpp = 2, m = 8;
    for (std::int64_t rank = 0; rank < pp; ++rank) {
      const auto order = schedule::pipeline_order(rank, pp, vpp, m);
      const std::int64_t warmup = schedule::warmup_passes(rank, pp, vpp, m);
      // Every steady-state (forward, backward) step pairs, the warm-up does not; where a rank's first
      // steady forward and first backward are the same micro-batch's (the last rank), one step
      // cannot pair and the pairing moves one pass on.
      const std::int64_t pairs = program::combined_pairs(order);
      CHECK(pairs <= m * vpp - warmup);
      CHECK(pairs >= m * vpp - warmup - 1);
      for (std::int64_t i = 0; i < warmup; ++i) CHECK(program::combined_partners(order)[static_cast<std::size_t>(i)] == -1);
    }
  }
}

TEST_CASE("dispatcher SMs: Megatron-Core's defaults, the scenario's value, NCCL's p2p channels") {
  Scenario s;
  s.system = config::load_system_preset("dgx-b200", 8);
  const double sms = static_cast<double>(s.system.gpu.sm_count);
  REQUIRE(sms > 0);
  s.moe.dispatcher = Dispatcher::kHybridep;
  CHECK(program::dispatcher_sm_share(s) == 24.0 / sms);
  s.moe.dispatcher_sms = 32;
  CHECK(program::dispatcher_sm_share(s) == 32.0 / sms);
  s.moe.dispatcher_sms.reset();
  s.moe.dispatcher = Dispatcher::kDeepep;
  CHECK(program::dispatcher_sm_share(s) == 20.0 / sms);
  s.moe.dispatcher = Dispatcher::kAlltoall;  // 32 p2p channels, one CTA each (nccl_constants.hpp)
  CHECK(program::dispatcher_sm_share(s) == 32.0 / sms);
}
