// compute/ and collective/ with a calibration profile (docs/profile.md): exact at measured rows,
// log-space interpolation between them, clamped and counted outside the measured range, the roofline or
// the closed form (counted) where the profile has no rows.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "../test_paths.hpp"
#include "collective/cost_model.hpp"
#include "compute/grouped_gemm.hpp"
#include "compute/kernel_cost.hpp"
#include "config/hw_loader.hpp"
#include "config/profile_loader.hpp"
#include "program/profile_warnings.hpp"

using namespace moesim;
using compute::GemmPart;

namespace {

hw::GpuSpec h200() { return config::load_gpu_preset("h200-sxm"); }

std::shared_ptr<const hw::Profile> synthetic() {
  static const std::shared_ptr<const hw::Profile> p =
      config::load_profile_file((test::source_dir() / "tests/profile/data/h200-synthetic.json").string());
  return p;
}

hw::ProfileTiming us(double median) { return {median, 0, 1}; }

/// A profile with two BF16 GEMMs that differ only in m, at ratios 2 and 1/2 to the roofline.
std::shared_ptr<hw::Profile> two_gemms(const compute::KernelCostModel& roofline) {
  auto p = std::make_shared<hw::Profile>();
  p->name = "two";
  p->provenance.gpu = "h200-sxm";
  const double a = roofline.roofline_gemm({1024, 4096, 4096, 1}, Precision::kBf16).value() * 2.0;
  const double b = roofline.roofline_gemm({16384, 4096, 4096, 1}, Precision::kBf16).value() * 0.5;
  p->gemm.push_back({Precision::kBf16, 1024, 4096, 4096, us(a * 1e6), "", a * 1e6});
  p->gemm.push_back({Precision::kBf16, 16384, 4096, 4096, us(b * 1e6), "", b * 1e6});
  return p;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), std::abs(b)); }

}  // namespace

TEST_CASE("GEMM: the measured time at every measured shape, the roofline's ratio in log space between") {
  const auto profile = synthetic();
  const compute::KernelCostModel k(h200(), profile);
  for (const hw::ProfileGemm& g : profile->gemm) {
    CAPTURE(g.m);
    CAPTURE(g.n);
    CAPTURE(g.k);
    CHECK(rel(k.gemm({g.m, g.n, g.k, 1}, g.precision).value(), g.time.median_us * 1e-6) < 1e-12);
  }
  CHECK(k.profile_usage().gemm[compute::index_of(Precision::kBf16)].interpolated == 18);
  CHECK(k.profile_usage().gemm[compute::index_of(Precision::kBf16)].outside == 0);

  // Between two rows: the ratio lies between theirs and moves monotonically from one to the other.
  const compute::KernelCostModel roofline(h200());
  const compute::KernelCostModel two(h200(), two_gemms(roofline));
  double last = 3.0;
  for (const std::int64_t m : {1024, 1500, 2048, 3000, 4096, 6000, 8192, 12000, 16384}) {
    CAPTURE(m);
    const double ratio = two.gemm({m, 4096, 4096, 1}, Precision::kBf16).value() /
                         roofline.roofline_gemm({m, 4096, 4096, 1}, Precision::kBf16).value();
    CHECK(ratio <= 2.0 * (1 + 1e-12));
    CHECK(ratio >= 0.5 * (1 - 1e-12));
    CHECK(ratio < last);
    last = ratio;
  }
  // Inverse-distance weighting in log m: at the geometric midpoint both rows weigh alike, so the ratio
  // is their geometric mean.
  const double mid = two.gemm({4096, 4096, 4096, 1}, Precision::kBf16).value() /
                     roofline.roofline_gemm({4096, 4096, 4096, 1}, Precision::kBf16).value();
  CHECK(mid == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(two.profile_usage().gemm[0].interpolated == 10);
  CHECK(two.profile_usage().gemm[0].outside == 0);
}

TEST_CASE("GEMM outside the measured range clamps to the nearest measured ratio and is counted") {
  const compute::KernelCostModel roofline(h200());
  const compute::KernelCostModel two(h200(), two_gemms(roofline));
  // m beyond the largest row: the ratio of the row at m = 16384.
  const double big = two.gemm({65536, 4096, 4096, 1}, Precision::kBf16).value();
  CHECK(rel(big, 0.5 * roofline.roofline_gemm({65536, 4096, 4096, 1}, Precision::kBf16).value()) < 1e-12);
  // n outside (the rows all have n = 4096): clamped to 4096, then m interpolated as inside.
  const double narrow = two.gemm({1024, 256, 4096, 1}, Precision::kBf16).value();
  CHECK(rel(narrow, 2.0 * roofline.roofline_gemm({1024, 256, 4096, 1}, Precision::kBf16).value()) < 1e-12);
  const auto& u = two.profile_usage().gemm[compute::index_of(Precision::kBf16)];
  CHECK(u.outside == 2);
  CHECK(u.interpolated == 0);
}

TEST_CASE("GEMM of a precision the profile has no rows for: the roofline, counted as a fallback") {
  const compute::KernelCostModel k(h200(), synthetic());
  const compute::KernelCostModel roofline(h200());
  const compute::GemmShape s{4096, 4096, 4096, 1};
  CHECK(k.gemm(s, Precision::kFp8).value() == roofline.gemm(s, Precision::kFp8).value());
  CHECK(k.gemm(s, Precision::kFp8, compute::Accumulation::kSplit).value() ==
        roofline.gemm(s, Precision::kFp8, compute::Accumulation::kSplit).value());
  CHECK(k.profile_usage().gemm[compute::index_of(Precision::kFp8)].fallback == 2);
  // Batched GEMMs (the unfused attention's) have no table either.
  CHECK(k.gemm({4096, 4096, 128, 32}, Precision::kBf16).value() == roofline.gemm({4096, 4096, 128, 32}, Precision::kBf16).value());
  CHECK(k.profile_usage().batched_gemm[compute::index_of(Precision::kBf16)].fallback == 1);
  // Without a profile nothing is counted.
  (void)roofline.gemm(s, Precision::kBf16);
  CHECK(roofline.profile_usage().gemm[0].total() == 0);
}

TEST_CASE("grouped GEMM: measured rows exact (forward and, with n and k swapped, data gradient); weight "
          "gradients take the forward ratio") {
  const auto profile = synthetic();
  const compute::KernelCostModel k(h200(), profile);
  const compute::KernelCostModel roofline(h200());
  for (const hw::ProfileGroupedGemm& g : profile->grouped_gemm) {
    CAPTURE(g.n);
    CAPTURE(g.tokens.front());
    const double measured = g.time.median_us * 1e-6;
    CHECK(rel(compute::grouped_gemm(k, {g.tokens, g.n, g.k, GemmPart::kForward}, Precision::kBf16).value(), measured) <
          1e-12);
    // dX = dY·Wᵀ over the same experts is the forward problem with n and k swapped.
    CHECK(rel(compute::grouped_gemm(k, {g.tokens, g.k, g.n, GemmPart::kDgrad}, Precision::kBf16).value(), measured) <
          1e-12);
    const double ratio = measured / compute::grouped_gemm_roofline(roofline, {g.tokens, g.n, g.k, GemmPart::kForward},
                                                                  Precision::kBf16)
                                        .value();
    CHECK(rel(compute::grouped_gemm(k, {g.tokens, g.n, g.k, GemmPart::kWgrad}, Precision::kBf16).value(),
              ratio * compute::grouped_gemm_roofline(roofline, {g.tokens, g.n, g.k, GemmPart::kWgrad}, Precision::kBf16)
                          .value()) < 1e-12);
  }
  const auto& u = k.profile_usage();
  CHECK(u.grouped[0].interpolated == 18);
  CHECK(u.grouped_wgrad == 6);
  // The loop implementation (moe.grouped_gemm false) has no rows: the roofline, counted.
  const compute::KernelCostModel loop(h200(), profile, hw::GroupedImplementation::kLoop);
  const std::vector<std::int64_t> tokens(8, 1024);
  CHECK(compute::grouped_gemm(loop, {tokens, 28672, 4096, GemmPart::kForward}, Precision::kBf16).value() ==
        compute::grouped_gemm_roofline(roofline, {tokens, 28672, 4096, GemmPart::kForward}, Precision::kBf16).value());
  CHECK(loop.profile_usage().grouped[0].fallback == 1);
  CHECK_FALSE(loop.calibrated_grouped(Precision::kBf16));
  CHECK(k.calibrated_grouped(Precision::kBf16));
}

TEST_CASE("memory-bound kernels: bandwidth interpolated log-log in bytes, clamped beyond the measured sizes") {
  const auto profile = synthetic();
  const compute::KernelCostModel k(h200(), profile);
  std::vector<const hw::ProfileKernel*> copies;
  for (const auto& row : profile->kernels) {
    CHECK(rel(k.memory_bound(Bytes(static_cast<double>(row.bytes)), row.kernel).value(), row.time.median_us * 1e-6) < 1e-12);
    if (row.kernel == hw::MemoryKernel::kCopy) copies.push_back(&row);
  }
  REQUIRE(copies.size() >= 2);
  // At the geometric mean of two neighbouring sizes the bandwidth is the geometric mean of theirs.
  const auto bw = [](const hw::ProfileKernel* r) { return static_cast<double>(r->bytes) / (r->time.median_us * 1e-6); };
  const double mid_bytes = std::sqrt(static_cast<double>(copies[0]->bytes) * static_cast<double>(copies[1]->bytes));
  const double mid_bw = mid_bytes / k.memory_bound(Bytes(mid_bytes)).value();
  CHECK(mid_bw == doctest::Approx(std::sqrt(bw(copies[0]) * bw(copies[1]))).epsilon(1e-9));
  // Below the smallest size: the smallest size's bandwidth, counted as outside.
  const auto copy = static_cast<std::size_t>(hw::MemoryKernel::kCopy);
  const std::int64_t outside_before = k.profile_usage().memory[copy].outside;
  CHECK(k.memory_bound(Bytes(1000)).value() == doctest::Approx(1000 / bw(copies[0])).epsilon(1e-12));
  CHECK(k.profile_usage().memory[copy].outside == outside_before + 1);
  // A kernel with no rows: the roofline (no profile in the minimal one's copy-less cases is not needed:
  // the published profiles have no kernels table at all).
  const compute::KernelCostModel published(config::load_gpu_preset("h100-sxm"),
                                           config::load_builtin_profile("h100-published"));
  const compute::KernelCostModel roofline(config::load_gpu_preset("h100-sxm"));
  CHECK(published.memory_bound(Bytes(1e9), hw::MemoryKernel::kPermute).value() == roofline.memory_bound(Bytes(1e9)).value());
  CHECK(published.memory_bound_fused(Bytes(1e9), hw::MemoryKernel::kCastFp8).value() ==
        roofline.memory_bound(Bytes(1e9)).value() - roofline.launch_gap().value());
  CHECK(published.profile_usage().memory[static_cast<std::size_t>(hw::MemoryKernel::kPermute)].fallback == 1);
}

TEST_CASE("attention: exact at measured rows, fallback where the profile has no rows of that causality") {
  const auto profile = synthetic();
  const compute::KernelCostModel k(h200(), profile);
  for (const auto& a : profile->attention) {
    compute::AttentionShape s{a.batch_heads, a.seq, a.seq, a.head_dim, a.head_dim, a.causal};
    const double t = a.direction == hw::AttentionDirection::kForward ? k.flash_attention_forward(s).value()
                                                                     : k.flash_attention_backward(s).value();
    CHECK(rel(t, a.time.median_us * 1e-6) < 1e-12);
  }
  const compute::KernelCostModel roofline(h200());
  compute::AttentionShape encoder{32, 4096, 4096, 128, 128, false};  // the synthetic rows are all causal
  CHECK(k.flash_attention_forward(encoder).value() == roofline.flash_attention_forward(encoder).value());
  constexpr auto kFlash = static_cast<std::size_t>(hw::AttentionImplementation::kFlash);
  CHECK(k.profile_usage().attention[kFlash][0].fallback == 1);
  CHECK(k.profile_usage().attention[kFlash][0].interpolated == 4);
}

namespace {

/// A profile with one attention row of `impl` at `shape` (causal, forward or backward), `ratio` × the
/// roofline of the kernel that implementation times.
std::shared_ptr<hw::Profile> one_attention_row(const compute::KernelCostModel& roofline,
                                               hw::AttentionImplementation impl, hw::AttentionDirection d, const compute::AttentionShape& shape,
                                               double ratio) {
  auto p = std::make_shared<hw::Profile>();
  p->name = "one-attention-row";
  p->provenance.gpu = "h200-sxm";
  const bool forward = d == hw::AttentionDirection::kForward;
  const bool flash = impl == hw::AttentionImplementation::kFlash;
  const double model = flash ? (forward ? roofline.roofline_flash_attention_forward(shape)
                                        : roofline.roofline_flash_attention_backward(shape))
                                   .value()
                             : (forward ? roofline.roofline_unfused_attention_forward(shape, Precision::kBf16)
                                        : roofline.roofline_unfused_attention_backward(shape, Precision::kBf16))
                                   .value();
  hw::ProfileAttention a;
  a.implementation = impl;
  a.direction = d;
  a.batch_heads = shape.batch_heads;
  a.seq = shape.query_len;
  a.head_dim = shape.head_dim_qk;
  a.causal = shape.causal;
  a.time = us(model * ratio * 1e6);
  p->attention.push_back(a);
  return p;
}

}  // namespace

TEST_CASE("attention: an unfused row corrects the unfused core (dropout stays memory-bound), not flash") {
  const compute::KernelCostModel roofline(h200());
  const compute::AttentionShape s{32, 4096, 4096, 128, 128, true};
  const double scores = 32.0 * 4096.0 * 4096.0;
  constexpr auto kUnfused = static_cast<std::size_t>(hw::AttentionImplementation::kUnfused);
  constexpr auto kFlash = static_cast<std::size_t>(hw::AttentionImplementation::kFlash);

  SUBCASE("forward") {
    const auto profile = one_attention_row(roofline, hw::AttentionImplementation::kUnfused,
                                           hw::AttentionDirection::kForward, s, 1.7);
    const compute::KernelCostModel k(h200(), profile);
    const double measured = profile->attention.front().time.median_us * 1e-6;
    // Dropout: read 2, write 2 and a 1-byte mask per score, at the roofline (the profile has no kernels rows).
    const double dropout = roofline.memory_bound(Bytes(5.0 * scores)).value();
    CHECK(rel(k.unfused_attention_forward(s, Precision::kBf16).value(), measured + dropout) < 1e-9);
    CHECK(k.flash_attention_forward(s).value() == roofline.flash_attention_forward(s).value());
    CHECK(k.profile_usage().attention[kUnfused][0].interpolated == 1);
    CHECK(k.profile_usage().attention[kFlash][0].fallback == 1);
    // The backward has no row of its own: unchanged, and counted as a fallback.
    CHECK(k.unfused_attention_backward(s, Precision::kBf16).value() ==
          roofline.unfused_attention_backward(s, Precision::kBf16).value());
    CHECK(k.profile_usage().attention[kUnfused][1].fallback == 1);
  }
  SUBCASE("backward") {
    const auto profile = one_attention_row(roofline, hw::AttentionImplementation::kUnfused,
                                           hw::AttentionDirection::kBackward, s, 0.8);
    const compute::KernelCostModel k(h200(), profile);
    const double measured = profile->attention.front().time.median_us * 1e-6;
    const double dropout = roofline.memory_bound(Bytes(5.0 * scores)).value();
    CHECK(rel(k.unfused_attention_backward(s, Precision::kBf16).value(), measured + dropout) < 1e-9);
    CHECK(k.flash_attention_backward(s).value() == roofline.flash_attention_backward(s).value());
  }
}

TEST_CASE("attention: the profile warnings say which implementation was interpolated and which fell back") {
  const compute::KernelCostModel roofline(h200());
  const compute::AttentionShape s{32, 4096, 4096, 128, 128, true};
  const auto profile = one_attention_row(roofline, hw::AttentionImplementation::kUnfused,
                                         hw::AttentionDirection::kForward, s, 1.2);
  const compute::KernelCostModel k(h200(), profile);
  (void)k.unfused_attention_forward(s, Precision::kBf16);
  (void)k.unfused_attention_backward(s, Precision::kBf16);
  (void)k.flash_attention_forward(s);
  const collective::CollectiveCostModel c(config::load_system_preset("hgx-h200", 8), profile);
  std::string text;
  for (const std::string& w : program::profile_warnings(*profile, k, c)) text += w + "\n";
  INFO(text);
  CHECK(text.find("unfused attention forward interpolated (1 query)") != std::string::npos);
  CHECK(text.find("unfused attention backward fell back to roofline (1 query, no unfused backward rows of this "
                  "causality)") != std::string::npos);
  CHECK(text.find("flash attention forward fell back to roofline (1 query, no flash attention rows)") !=
        std::string::npos);
}

TEST_CASE("attention: a flash row corrects flash attention only; the unfused path keeps its roofline") {
  const compute::KernelCostModel roofline(h200());
  const compute::AttentionShape s{32, 4096, 4096, 128, 128, true};
  const auto profile =
      one_attention_row(roofline, hw::AttentionImplementation::kFlash, hw::AttentionDirection::kForward, s, 1.3);
  const compute::KernelCostModel k(h200(), profile);
  const double measured = profile->attention.front().time.median_us * 1e-6;
  CHECK(rel(k.flash_attention_forward(s).value(), measured) < 1e-9);
  CHECK(k.unfused_attention_forward(s, Precision::kBf16).value() ==
        roofline.unfused_attention_forward(s, Precision::kBf16).value());
  constexpr auto kUnfused = static_cast<std::size_t>(hw::AttentionImplementation::kUnfused);
  constexpr auto kFlash = static_cast<std::size_t>(hw::AttentionImplementation::kFlash);
  CHECK(k.profile_usage().attention[kFlash][0].interpolated == 1);
  CHECK(k.profile_usage().attention[kUnfused][0].fallback == 1);
}

TEST_CASE("attention: without unfused rows the unfused path is the same arithmetic as before (9 and 11 bytes "
          "per score, one memory-bound term)") {
  const compute::KernelCostModel k(h200());
  const compute::AttentionShape s{16, 2048, 2048, 128, 128, true};
  const double scores = 16.0 * 2048.0 * 2048.0;
  const double qk = k.gemm({2048, 2048, 128, 16}, Precision::kBf16).value();
  const double pv = k.gemm({2048, 128, 2048, 16}, Precision::kBf16).value();
  CHECK(k.unfused_attention_forward(s, Precision::kBf16).value() ==
        qk + pv + k.memory_bound(Bytes(9.0 * scores)).value());
  const double dv = k.gemm({2048, 128, 2048, 16}, Precision::kBf16).value();
  const double dp = k.gemm({2048, 2048, 128, 16}, Precision::kBf16).value();
  const double dq = k.gemm({2048, 128, 2048, 16}, Precision::kBf16).value();
  const double dk = k.gemm({2048, 128, 2048, 16}, Precision::kBf16).value();
  CHECK(k.unfused_attention_backward(s, Precision::kBf16).value() ==
        dv + dp + dq + dk + k.memory_bound(Bytes(11.0 * scores)).value());
}

TEST_CASE("collectives: the profile's busbw inside one NVLink domain, the closed form (counted) elsewhere") {
  const auto profile = synthetic();
  hw::SystemSpec system = config::load_system_preset("hgx-h200", 64);
  const collective::CollectiveCostModel c(system, profile);
  const collective::GroupPlacement node8{8, 8};
  const collective::GroupPlacement pair{2, 2};
  for (const auto& row : profile->collectives) {
    CAPTURE(row.bytes);
    const auto op = static_cast<collective::Op>(static_cast<int>(row.op));
    const double t = c.time(op, Bytes(static_cast<double>(row.bytes)), row.ranks == 8 ? node8 : pair).value();
    // nccl-tests: busbw = size × factor / time; the row's busbw is rounded to 6 decimals.
    CHECK(rel(t, static_cast<double>(row.bytes) * collective::busbw_factor(op, row.ranks) / (row.busbw_gbps * 1e9)) < 1e-12);
    CHECK(rel(t, row.time.median_us * 1e-6) < 1e-5);
  }
  // Between two sizes: busbw log-log linear.
  const double t_mid = c.time(collective::Op::kAllReduce, Bytes(std::sqrt(1024.0 * 16384.0)), node8).value();
  CHECK(t_mid > 0);
  // Outside the measured sizes: clamped to the end's busbw, counted.
  const double huge = 16.0 * 1024 * 1024 * 1024;
  const double t_huge = c.time(collective::Op::kAllReduce, Bytes(huge), node8).value();
  const double t_max = c.time(collective::Op::kAllReduce, Bytes(1024.0 * 1024 * 1024), node8).value();
  CHECK(t_huge == doctest::Approx(16.0 * t_max).epsilon(1e-12));
  // A group size the profile did not measure, and a group spanning nodes: the closed form.
  const collective::GroupPlacement node4{4, 4};
  const collective::GroupPlacement two_nodes{16, 8};
  CHECK(c.time(collective::Op::kAllReduce, Bytes(1e8), node4).value() ==
        collective::collective_time(system, collective::Op::kAllReduce, Bytes(1e8), node4).value());
  CHECK(c.time(collective::Op::kAllReduce, Bytes(1e8), two_nodes).value() ==
        collective::collective_time(system, collective::Op::kAllReduce, Bytes(1e8), two_nodes).value());
  // The all-to-all of a dispatcher inside the node: its NVLink bytes are (n−1)/n of nccl-tests' size.
  const double size = 64.0 * 1024 * 1024;
  CHECK(rel(c.alltoall_split_time(Bytes(size * 7 / 8), Bytes(0), node8).value(),
            c.time(collective::Op::kAllToAll, Bytes(size), node8).value()) < 1e-12);
  const auto& u = c.profile_usage();
  std::int64_t interpolated = 0, outside = 0, no_rows = 0, multi = 0;
  for (std::size_t i = 0; i < u.size; ++i) {
    interpolated += u.entries[i].interpolated;
    outside += u.entries[i].outside;
    no_rows += u.entries[i].no_rows;
    multi += u.entries[i].multi_domain;
  }
  CHECK(interpolated == 30 + 1 + 1 + 2);
  CHECK(outside == 1);
  CHECK(no_rows == 1);
  CHECK(multi == 1);
  // Without a profile: exactly the closed form, nothing counted.
  const collective::CollectiveCostModel plain(system, nullptr);
  CHECK(plain.time(collective::Op::kAllGather, Bytes(1e7), node8).value() ==
        collective::collective_time(system, collective::Op::kAllGather, Bytes(1e7), node8).value());
  CHECK(plain.profile_usage().size == 0);
}

TEST_CASE("tables are built once per profile and GPU spec and shared") {
  const auto profile = synthetic();
  const compute::KernelCostModel a(h200(), profile);
  const compute::KernelCostModel b(h200(), profile);
  CHECK(a.profile_tables() == b.profile_tables());
  hw::GpuSpec tuned = h200();
  tuned.gemm_peak_efficiency *= 0.9;  // another spec: its own tables (the ratios are against its roofline)
  const compute::KernelCostModel c(tuned, profile);
  CHECK(c.profile_tables() != a.profile_tables());
  // The measured rows stay exact whatever the roofline.
  const auto& g = profile->gemm.front();
  CHECK(rel(c.gemm({g.m, g.n, g.k, 1}, g.precision).value(), g.time.median_us * 1e-6) < 1e-12);
}
