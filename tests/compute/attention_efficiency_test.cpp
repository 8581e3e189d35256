// compute/attention_efficiency: the tile model of fused attention against the published cuDNN
// figures it was fitted to, and what it does to ring context parallelism.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <cstdio>

#include "compute/attention_efficiency.hpp"
#include "compute/kernel_cost.hpp"
#include "config/hw_loader.hpp"

using namespace moesim;

namespace {
// FlashAttention-3 paper (Shah et al. 2024, arXiv 2407.08608), Figure 5 (c) and (d): cuDNN fused
// attention forward on H100 SXM5, BF16, head dim 128, batch × seqlen = 16k, TFLOP/s.
constexpr std::array<double, 6> kSeq{512, 1024, 2048, 4096, 8192, 16384};
constexpr std::array<double, 6> kNonCausal{497, 574, 617, 609, 600, 595};
constexpr std::array<double, 6> kCausal{315, 410, 484, 518, 529, 539};
}  // namespace

TEST_CASE("the tile model reproduces cuDNN's attention rate across sequence lengths") {
  // The model predicts rates up to one constant (the long-sequence rate): take the log-mean ratio
  // as that constant and look at what is left.
  double log_sum = 0;
  for (std::size_t i = 0; i < kSeq.size(); ++i) {
    log_sum += std::log(kNonCausal[i] / compute::attention_tile_efficiency(kSeq[i], kSeq[i], false));
    log_sum += std::log(kCausal[i] / compute::attention_tile_efficiency(kSeq[i], kSeq[i], true));
  }
  const double asymptote = std::exp(log_sum / 12.0);
  double square = 0, worst = 0;
  for (std::size_t i = 0; i < kSeq.size(); ++i) {
    for (const bool causal : {false, true}) {
      const double measured = causal ? kCausal[i] : kNonCausal[i];
      const double predicted = asymptote * compute::attention_tile_efficiency(kSeq[i], kSeq[i], causal);
      const double err = predicted / measured - 1.0;
      std::printf("cuDNN %-10s s=%6.0f  measured %4.0f  model %6.1f TFLOP/s  (%+5.1f %%)\n",
                  causal ? "causal" : "non-causal", kSeq[i], measured, predicted, 100.0 * err);
      square += err * err;
      worst = std::max(worst, std::abs(err));
    }
  }
  const double rms = std::sqrt(square / 12.0);
  std::printf("attention tile model vs cuDNN (FA3 paper Fig. 5): RMS %.1f %%, worst %.1f %%\n", 100.0 * rms,
              100.0 * worst);
  CHECK(rms < 0.07);
  CHECK(worst < 0.12);
  // The shape the model must get right: a 512-token causal call runs near half the long rate.
  CHECK(compute::attention_tile_efficiency(512, 512, true) / compute::attention_tile_efficiency(16384, 16384, true) ==
        doctest::Approx(kCausal[0] / kCausal[5]).epsilon(0.06));
}

TEST_CASE("attention time factor: 1 at the reference shape, more for short or split sequences") {
  compute::AttentionShape ref{32, 8192, 8192, 128, 128, true};
  CHECK(compute::attention_shape_time_factor(ref) == doctest::Approx(1.0));
  compute::AttentionShape short_seq{32, 2048, 2048, 128, 128, true};
  CHECK(compute::attention_shape_time_factor(short_seq) > 1.1);
  compute::AttentionShape full = ref;
  full.causal = false;
  CHECK(compute::attention_shape_time_factor(full) < 1.0);  // no diagonal waste

  // Ring CP over 8,192 tokens: each rank's pass is cp shorter calls, so the same FLOPs take longer,
  // more so as cp grows; still cheaper per FLOP than one call over the short local sequence.
  double previous = 1.0;
  for (const std::int64_t cp : {2, 4, 8}) {
    compute::AttentionShape ring{32, 8192 / cp, 8192, 128, 128, true, cp};
    const double f = compute::attention_shape_time_factor(ring);
    CAPTURE(cp);
    CHECK(f > previous);
    previous = f;
  }
  // Without the causal mask a ring step is a full s/cp × s/cp call.
  compute::AttentionShape bidir{32, 2048, 8192, 128, 128, false, 4};
  compute::AttentionShape bidir_call{32, 2048, 2048, 128, 128, false};
  const double per_call = compute::attention_shape_time_factor(bidir_call);
  CHECK(compute::attention_shape_time_factor(bidir) == doctest::Approx(per_call));
}

TEST_CASE("the kernel cost model charges ring CP one launch per step and the shape factor") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  compute::AttentionShape whole{16, 8192, 8192, 128, 128, true};
  compute::AttentionShape ring{16, 2048, 8192, 128, 128, true, 4};
  // A quarter of the FLOPs, but at a lower rate and with four launches.
  const double t_whole = k.flash_attention_forward(whole).value();
  const double t_ring = k.flash_attention_forward(ring).value();
  CHECK(t_ring > 0.25 * t_whole);
  const double flops_ratio = compute::KernelCostModel::attention_forward_flops(ring).value() /
                             compute::KernelCostModel::attention_forward_flops(whole).value();
  CHECK(flops_ratio == doctest::Approx(0.25));
  const double gap = k.launch_gap().value();
  CHECK((t_ring - 4 * gap) / (t_whole - gap) ==
        doctest::Approx(0.25 * compute::attention_shape_time_factor(ring)).epsilon(1e-9));
}
