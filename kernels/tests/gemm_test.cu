// GPU tests of the cuBLASLt GEMMs (every heuristic algorithm checked against the CPU reference on
// seeded random operands, BF16 / FP8 and the block-scaled formats where the device has them) and of
// the grouped GEMM over ragged expert loads, both implementations.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/blas_context.hpp"
#include "kernels/device_info.hpp"
#include "kernels/gemm_lt.hpp"
#include "kernels/gemm_operands.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/numeric.hpp"
#include "kernels/stream.hpp"
#include "kernels/tests/gpu_test.hpp"
#include "kernels/timing.hpp"

using namespace moesim::kernels;

namespace {

// Every algorithm the heuristic offers (up to 8) must compute the same function.
void check_precision(GemmPrecision p) {
  int device = 0;
  MOESIM_CUDA_CHECK(cudaGetDevice(&device));
  const DeviceInfo info = query_device(device);
  if (const std::string why = gemm_precision_problem(p, info.cc_major, info.cc_minor); !why.empty()) {
    std::printf("      %s: unsupported here (%s)\n", std::string(precision_name(p)).c_str(), why.c_str());
    return;
  }
  Stream stream;
  BlasContext blas(stream);
  for (const GemmShape s : {GemmShape{128, 256, 64}, GemmShape{1008, 528, 160}, GemmShape{4096, 2048, 1024}}) {
    LtMatmul gemm(blas.lt(), p, s, blas.workspace_bytes(), 8);
    const std::string where = std::string(precision_name(p)) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    if (!gemm.supported() && p != GemmPrecision::kBf16 && p != GemmPrecision::kFp8) {
      std::printf("      %s: unsupported by cuBLASLt here (%s)\n", where.c_str(), gemm.unsupported_reason().c_str());
      continue;
    }
    test::require(gemm.supported(), where + ": " + gemm.unsupported_reason());
    GemmOperands operands(p, s.m, s.n, s.n, s.k, stream);
    for (int a = 0; a < gemm.algorithm_count(); ++a) {
      const Comparison c = check_gemm_samples(gemm, operands, a, 512, blas.lt_workspace(), stream);
      require_close(c, gemm_tolerance(p), where + " heuristic#" + std::to_string(a));
    }
    std::printf("      %s: %d algorithms checked\n", where.c_str(), gemm.algorithm_count());
  }
}

void report_heuristic_vs_best() {
  Stream stream;
  BlasContext blas(stream);
  const GemmShape s{8192, 8192, 8192};
  LtMatmul gemm(blas.lt(), GemmPrecision::kBf16, s, blas.workspace_bytes(), 8);
  test::require(gemm.supported(), gemm.unsupported_reason());
  GemmOperands operands(GemmPrecision::kBf16, s.m, s.n, s.n, s.k, stream);
  require_close(check_gemm_samples(gemm, operands, 0, 64, blas.lt_workspace(), stream), 1e-2, "bf16 8192^3");
  TimingPlan plan;
  plan.repeats = 10;
  double first = 0, best = 1e30;
  for (int a = 0; a < gemm.algorithm_count(); ++a) {
    const double us = time_launches(stream, [&] { gemm.run(operands.whole(), a, blas.lt_workspace(), stream); }, plan).median;
    if (a == 0) first = us;
    best = std::min(best, us);
  }
  const double tflops = 2.0 * 8192.0 * 8192.0 * 8192.0 / (first * 1e-6) / 1e12;
  std::printf("      bf16 8192^3: heuristic#0 %.1f us (%.0f TFLOP/s), best of %d %.1f us: heuristic#0 at %.0f%% of best\n", first,
              tflops, gemm.algorithm_count(), best, 100.0 * best / first);
}

void check_grouped(const std::vector<int>& tokens) {
  Stream stream;
  BlasContext blas(stream);
  GroupedGemm grouped(blas, GroupedGemmShape{tokens, 256, 128});
  require_close(grouped.check(false, 16, stream), 1e-2, "grouped GEMM, loop of cuBLASLt GEMMs");
  if (grouped.grouped_batched_problem().empty()) {
    require_close(grouped.check(true, 16, stream), 1e-2, "grouped GEMM, cublasGemmGroupedBatchedEx");
  } else {
    std::printf("      grouped-batched unsupported here (%s)\n", grouped.grouped_batched_problem().c_str());
  }
}

// The backward layouts of a linear layer, against a plain CPU product of the same stored operands:
// dgrad dX = dY W, wgrad dW (+)= dY^T X into FP32 (accumulating onto a random start).
void check_backward_layout(GemmLayout layout, bool accumulate) {
  Stream stream;
  BlasContext blas(stream);
  const GemmShape s{96, 160, 72};  // [m x n] out, reduction k; none a multiple of another
  // Stored operands: left [m x k] (dgrad) or [k x m] (wgrad), right [k x n].
  const std::size_t left = static_cast<std::size_t>(s.m * s.k), right = static_cast<std::size_t>(s.k * s.n);
  std::vector<std::uint16_t> l(left), r(right);
  for (std::size_t i = 0; i < left; ++i) l[i] = random_bf16(11, i);
  for (std::size_t i = 0; i < right; ++i) r[i] = random_bf16(12, i);
  const std::size_t outs = static_cast<std::size_t>(s.m * s.n);
  std::vector<float> start(outs);
  for (std::size_t i = 0; i < outs; ++i) start[i] = accumulate ? random_uniform(13, i) : 0.0f;
  DeviceBuffer<std::uint16_t> dl(l), dr(r), y16(outs);
  DeviceBuffer<float> y32(start);
  LtMatmul gemm(blas.lt(), GemmPrecision::kBf16, s, blas.workspace_bytes(), 1, 256, layout, accumulate);
  test::require(gemm.supported(), gemm.unsupported_reason());
  GemmPointers p;
  p.x = dl.data();
  p.w = dr.data();
  p.y = accumulate ? static_cast<void*>(y32.data()) : static_cast<void*>(y16.data());
  gemm.run(p, 0, blas.lt_workspace(), stream);
  stream.synchronize();
  std::vector<float> got(outs);
  if (accumulate) {
    got = y32.download();
  } else {
    const std::vector<std::uint16_t> h = y16.download();
    for (std::size_t i = 0; i < outs; ++i) got[i] = bf16_to_float(h[i]);
  }
  double err = 0, norm = 0;
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double want = start[static_cast<std::size_t>(i * s.n + j)];
      for (std::int64_t kk = 0; kk < s.k; ++kk) {
        const std::size_t li = static_cast<std::size_t>(layout == GemmLayout::kWgrad ? kk * s.m + i : i * s.k + kk);
        want += static_cast<double>(bf16_to_float(l[li])) * bf16_to_float(r[static_cast<std::size_t>(kk * s.n + j)]);
      }
      const double d = got[static_cast<std::size_t>(i * s.n + j)] - want;
      err += d * d;
      norm += want * want;
    }
  }
  const double rel = std::sqrt(err / norm);
  test::require(rel < 1e-2, "relative L2 error " + std::to_string(rel));
  std::printf("      %s%s: relative L2 error %.2e\n", layout == GemmLayout::kDgrad ? "dgrad" : "wgrad",
              accumulate ? " (FP32 accumulate)" : "", rel);
}

}  // namespace

int main() {
  return test::run_gpu_cases({
      {"gemm: bf16, every heuristic algorithm", [] { check_precision(GemmPrecision::kBf16); }},
      {"gemm: fp8 e4m3 per-tensor scales, every heuristic algorithm", [] { check_precision(GemmPrecision::kFp8); }},
      {"gemm: mxfp8 (sm_100+)", [] { check_precision(GemmPrecision::kMxfp8); }},
      {"gemm: nvfp4 (sm_100+)", [] { check_precision(GemmPrecision::kNvfp4); }},
      {"gemm: bf16 heuristic#0 vs best algorithm", report_heuristic_vs_best},
      {"grouped gemm: ragged loads with empty experts", [] { check_grouped({0, 17, 128, 5, 300, 0, 64, 1}); }},
      {"grouped gemm: one expert", [] { check_grouped({512}); }},
      {"gemm: bf16 dgrad layout", [] { check_backward_layout(GemmLayout::kDgrad, false); }},
      {"gemm: bf16 wgrad layout", [] { check_backward_layout(GemmLayout::kWgrad, false); }},
      {"gemm: bf16 wgrad accumulated into FP32", [] { check_backward_layout(GemmLayout::kWgrad, true); }},
  });
}
