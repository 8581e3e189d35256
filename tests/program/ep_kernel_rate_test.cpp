// DeepEP and HybridEP inside an NVLink domain run at their published algorithm bandwidth
// (hw/ep_kernel_rates.hpp, src/hw/gpus/*.json), not at the link rate: the table lookup, and the
// dispatch and combine the layer cost prices from it, derived here by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <string_view>

#include "../preset_scenario.hpp"
#include "config/hw_loader.hpp"
#include "hw/ep_kernel_rates.hpp"
#include "program/layer_cost.hpp"

using namespace moesim;
using hw::EpKernelPhase;

namespace {
hw::EpKernelTable made_up_table() {
  // rates in GB/s: dispatch FP8, dispatch BF16, combine
  const auto row = [](std::int64_t ranks, std::int64_t sms, double fp8, double bf16, double combine) {
    return hw::EpKernelRow{ranks, sms, gigabytes_per_second(fp8), gigabytes_per_second(bf16), gigabytes_per_second(combine)};
  };
  return {{row(8, 16, 200, 300, 250), row(8, 32, 400, 500, 450), row(16, 16, 100, 150, 120), row(16, 32, 180, 260, 220)}};
}

double gbps(std::optional<BytesPerSecond> r) { return r.value().value() / 1e9; }

Scenario moe_scenario(const char* system, Dispatcher d, Precision p, std::optional<std::int64_t> sms) {
  Scenario s = test::preset_scenario("ep-kernel", "qwen3-30b-a3b", system, 8, {4096, 1, 8});
  s.parallel.ep = 8;
  s.parallel.dp = 8;
  s.moe.dispatcher = d;
  s.moe.dispatcher_sms = sms;
  s.precision = p;
  validate_layout(s);
  return s;
}

const program::LayerOp& forward_op(const program::OpProgram& ops, std::string_view name) {
  return test::find_op(ops.forward, name);
}

/// Bytes one rank receives per dispatch, its own rows included: 4096 tokens × hidden 2048 × the
/// expected ranks a token reaches (8 ranks of 16 experts each; a token's top-8 of 128 misses a given
/// rank with probability C(112, 8) / C(128, 8)) × bytes per element.
double received_bytes(double element_bytes) {
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (112.0 - i) / (128.0 - i);
  return 4096.0 * 2048.0 * 8.0 * (1.0 - miss) * element_bytes;
}
}  // namespace

TEST_CASE("the kernel table: nearest published group size, linear in SMs, held at the ends") {
  const auto t = made_up_table();
  CHECK(gbps(t.rate(EpKernelPhase::kDispatchBf16, 8, 16)) == doctest::Approx(300));
  CHECK(gbps(t.rate(EpKernelPhase::kDispatchBf16, 8, 24)) == doctest::Approx(400));   // halfway 16 → 32
  CHECK(gbps(t.rate(EpKernelPhase::kDispatchFp8, 8, 20)) == doctest::Approx(250));    // a quarter of the way
  CHECK(gbps(t.rate(EpKernelPhase::kCombine, 8, 8)) == doctest::Approx(250));         // below the table: its first row
  CHECK(gbps(t.rate(EpKernelPhase::kCombine, 8, 64)) == doctest::Approx(450));        // above: its last, never faster
  CHECK(gbps(t.rate(EpKernelPhase::kDispatchBf16, 12, 16)) == doctest::Approx(150));  // a tie takes the larger group
  CHECK(gbps(t.rate(EpKernelPhase::kDispatchBf16, 11, 16)) == doctest::Approx(300));  // nearer to 8
  CHECK(gbps(t.rate(EpKernelPhase::kDispatchBf16, 64, 32)) == doctest::Approx(260));  // beyond: the largest group
  CHECK_FALSE(hw::EpKernelTable{}.rate(EpKernelPhase::kCombine, 8, 16).has_value());
}

TEST_CASE("the Blackwell presets carry DeepEP's published HybridEP and DeepEP rates") {
  const auto b200 = config::load_gpu_preset("b200", "/gpu");
  CHECK(gbps(b200.ep_kernel_algbw.at("hybridep").rate(EpKernelPhase::kDispatchFp8, 8, 16)) == doctest::Approx(409.71));
  CHECK(gbps(b200.ep_kernel_algbw.at("deepep").rate(EpKernelPhase::kCombine, 8, 48)) == doctest::Approx(586));
  const auto gb200 = config::load_gpu_preset("gb200", "/gpu");
  CHECK(gbps(gb200.ep_kernel_algbw.at("hybridep").rate(EpKernelPhase::kDispatchBf16, 36, 32)) == doctest::Approx(479.02));
  CHECK(gb200.sources.count("ep_kernel_algbw_gb_per_s.hybridep") == 1);
  // Hopper intranode is not in the published tables: the closed form prices it.
  CHECK(config::load_gpu_preset("h100-sxm", "/gpu").ep_kernel_algbw.empty());
}

TEST_CASE("a B200 dispatch and combine take the received bytes over the published rate") {
  SUBCASE("HybridEP, BF16, 16 SMs: 535.94 GB/s dispatch, 530.86 GB/s combine") {
    const Scenario s = moe_scenario("dgx-b200", Dispatcher::kHybridep, Precision::kBf16, 16);
    const program::LayerCostModel model(s, schedule::step_shape(s));
    const auto ops = model.transformer_layer_ops(true, 4096);
    const auto& dispatch = forward_op(ops, "dispatch");
    const auto& combine = forward_op(ops, "combine");
    CHECK(dispatch.seconds - dispatch.latency_s == doctest::Approx(received_bytes(2.0) / 535.94e9).epsilon(1e-9));
    CHECK(combine.seconds - combine.latency_s == doctest::Approx(received_bytes(2.0) / 530.86e9).epsilon(1e-9));
  }
  SUBCASE("HybridEP, MXFP8 as Megatron-Core runs it: the bf16 hidden states at the BF16 column") {
    const Scenario s = moe_scenario("dgx-b200", Dispatcher::kHybridep, Precision::kMxfp8, 16);
    const program::LayerCostModel model(s, schedule::step_shape(s));
    const auto ops = model.transformer_layer_ops(true, 4096);  // the ops outlive the references into them
    const auto& dispatch = forward_op(ops, "dispatch");
    CHECK(dispatch.seconds - dispatch.latency_s == doctest::Approx(received_bytes(2.0) / 535.94e9).epsilon(1e-9));
  }
  SUBCASE("HybridEP, MXFP8 with moe.fp8_dispatch: the FP8 column, 1 byte + one fp32 scale per 128 elements") {
    Scenario s = moe_scenario("dgx-b200", Dispatcher::kHybridep, Precision::kMxfp8, 16);
    s.moe.fp8_dispatch = true;
    validate_layout(s);
    const program::LayerCostModel model(s, schedule::step_shape(s));
    const auto ops = model.transformer_layer_ops(true, 4096);  // the ops outlive the references into them
    const auto& dispatch = forward_op(ops, "dispatch");
    CHECK(dispatch.seconds - dispatch.latency_s ==
          doctest::Approx(received_bytes(1.0 + 4.0 / 128.0) / 409.71e9).epsilon(1e-9));
  }
  SUBCASE("DeepEP at Megatron-Core's default 20 SMs: halfway between the 16- and 24-SM rows") {
    const Scenario s = moe_scenario("dgx-b200", Dispatcher::kDeepep, Precision::kBf16, std::nullopt);
    const program::LayerCostModel model(s, schedule::step_shape(s));
    const auto ops = model.transformer_layer_ops(true, 4096);  // the ops outlive the references into them
    const auto& dispatch = forward_op(ops, "dispatch");
    CHECK(dispatch.seconds - dispatch.latency_s == doctest::Approx(received_bytes(2.0) / 421e9).epsilon(1e-9));
  }
}

TEST_CASE("without a published table (H100) the dispatch keeps the NVLink closed form") {
  const Scenario s = moe_scenario("hgx-h100", Dispatcher::kHybridep, Precision::kBf16, 16);
  const program::LayerCostModel model(s, schedule::step_shape(s));
  const auto ops = model.transformer_layer_ops(true, 4096);
  const auto& dispatch = forward_op(ops, "dispatch");
  // The 7 peers' rows at the NVLink bus rate: 450 GB/s × the system's NVLink efficiency.
  const double sent = received_bytes(2.0) * 7.0 / 8.0;
  const double link = s.system.gpu.nvlink_bandwidth.value() * s.system.nvlink_efficiency;
  CHECK(dispatch.seconds - dispatch.latency_s == doctest::Approx(sent / link).epsilon(1e-9));
}
