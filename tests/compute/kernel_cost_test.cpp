#include <doctest/doctest.h>

#include <algorithm>

#include "compute/kernel_cost.hpp"
#include "config/hw_loader.hpp"

using namespace moesim;

TEST_CASE("GEMM efficiency depends on shape: small and ragged GEMMs run further below peak") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  const double big = k.gemm_efficiency({8192, 8192, 8192, 1});
  const double small = k.gemm_efficiency({1024, 1024, 1024, 1});
  const double short_k = k.gemm_efficiency({8192, 8192, 128, 1});
  CHECK(big > small);
  CHECK(big > short_k);
  CHECK(big <= k.gpu().gemm_peak_efficiency);
  CHECK(big > 0.9 * k.gpu().gemm_peak_efficiency);
  // Wave quantisation: one more 128×256 tile than there are SMs costs a second, nearly empty wave
  // unless a smaller tile fills the machine better; either way it cannot beat the exact fit.
  const auto sms = k.gpu().sm_count;
  const double exact = k.gemm_efficiency({128 * sms, 256, 4096, 1});
  const double one_more = k.gemm_efficiency({128 * sms + 128, 256, 4096, 1});
  CHECK(exact > one_more);
}

TEST_CASE("split-K: a small output over a long K runs in slices, a GEMM that fills the GPU does not") {
  const auto gpu = config::load_gpu_preset("h100-sxm");
  const compute::KernelCostModel k(gpu);
  const FlopsPerSecond peak = *gpu.peak(Precision::kBf16);
  // A router's weight gradient (Qwen3-30B-A3B: hidden 2048 × 128 experts over 16384 tokens) has
  // 16 × 1 output tiles of 128×256 for 132 SMs: slices fill the GPU for far less than they cost.
  const compute::GemmShape router_wgrad{2048, 128, 16384, 1};
  const std::int64_t slices = k.split_k_slices(router_wgrad, peak);
  CHECK(slices > 1);
  CHECK(slices <= 16);
  CHECK(16384 / slices >= 256);
  CHECK(k.gemm_efficiency(router_wgrad, slices) > 2.0 * k.gemm_efficiency(router_wgrad));
  // The time is the split plan's compute plus its FP32 partial sums, written and read once.
  const double hbm = gpu.hbm_bandwidth.value() * gpu.hbm_efficiency;
  const double flops = 2.0 * 2048 * 128 * 16384;
  const double compute = flops / (peak.value() * k.gemm_efficiency(router_wgrad, slices));
  const double memory = (2.0 * (2048.0 * 16384 + 16384.0 * 128) + 2.0 * 2048 * 128) / hbm;
  const double partials = 2.0 * static_cast<double>(slices) * 2048 * 128 * 4 / hbm;
  CHECK(k.gemm(router_wgrad, Precision::kBf16).value() ==
        doctest::Approx(std::max(compute, memory) + partials + k.launch_gap().value()));
  const double unsplit = flops / (peak.value() * k.gemm_efficiency(router_wgrad));
  CHECK(k.gemm(router_wgrad, Precision::kBf16).value() < unsplit);
  // Too short a K to cut, and an output that already fills a wave, stay whole.
  CHECK(k.split_k_slices({2048, 128, 256, 1}, peak) == 1);
  CHECK(k.split_k_slices({8192, 8192, 8192, 1}, peak) == 1);
}

TEST_CASE("GEMM time is compute-bound for square GEMMs and memory-bound for skinny ones") {
  const auto gpu = config::load_gpu_preset("h100-sxm");
  const compute::KernelCostModel k(gpu);
  const double peak = gpu.peak(Precision::kBf16)->value();
  const double t = k.gemm({8192, 8192, 8192, 1}, Precision::kBf16).value();
  const double achieved = 2.0 * 8192.0 * 8192.0 * 8192.0 / t;
  CHECK(achieved / peak == doctest::Approx(k.gemm_efficiency({8192, 8192, 8192, 1})).epsilon(0.01));
  // 802816×192×768 (Azure AI-benchmarking-guide shape) moves ~0.9 GB for 0.24 TFLOP: memory-bound.
  const double skinny = k.gemm({802816, 192, 768, 1}, Precision::kFp8).value();
  const double bytes = 802816.0 * 768 + 768.0 * 192 + 2.0 * 802816 * 192;
  CHECK(skinny == doctest::Approx(bytes / (gpu.hbm_bandwidth.value() * gpu.hbm_efficiency) + k.launch_gap().value()));
  // FP8 doubles the peak: a large FP8 GEMM is faster than the same BF16 one.
  CHECK(k.gemm({8192, 8192, 8192, 1}, Precision::kFp8).value() < t);
}

TEST_CASE("attention: causal halves the work, backward costs more than forward") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  compute::AttentionShape a{32, 4096, 4096, 128, 128, true};
  compute::AttentionShape full = a;
  full.causal = false;
  CHECK(compute::KernelCostModel::attention_forward_flops(full).value() ==
        doctest::Approx(2.0 * compute::KernelCostModel::attention_forward_flops(a).value()));
  CHECK(compute::KernelCostModel::attention_forward_flops(a).value() == doctest::Approx(2.0 * 32 * 4096.0 * 4096 / 2 * 256));
  CHECK(k.flash_attention_backward(a) > k.flash_attention_forward(a));
  // Unfused attention materialises s×s scores: slower than the fused kernel at long sequences.
  CHECK(k.unfused_attention_forward(full, Precision::kBf16) > k.flash_attention_forward(full) * 0.5);
}

TEST_CASE("FP8 split accumulation costs time on Hopper only, and only for FP8") {
  using compute::Accumulation;
  const compute::KernelCostModel hopper(config::load_gpu_preset("h100-sxm"));
  const compute::KernelCostModel blackwell(config::load_gpu_preset("b200"));
  const compute::GemmShape big{8192, 8192, 8192, 1};
  // TE runs dgrad/wgrad with a split accumulator; Hopper's FP8 tensor cores pay for the promotion.
  CHECK(hopper.accumulation_slowdown(Precision::kFp8, Accumulation::kSplit) > 1.0);
  CHECK(hopper.gemm(big, Precision::kFp8, Accumulation::kSplit).value() >
        hopper.gemm(big, Precision::kFp8, Accumulation::kFast).value());
  // 16-bit GEMMs accumulate in FP32 anyway; Blackwell has no fast FP8 mode.
  CHECK(hopper.accumulation_slowdown(Precision::kBf16, Accumulation::kSplit) == 1.0);
  CHECK(blackwell.accumulation_slowdown(Precision::kFp8, Accumulation::kSplit) == 1.0);
  CHECK(blackwell.accumulation_slowdown(Precision::kMxfp8, Accumulation::kSplit) == 1.0);
}
