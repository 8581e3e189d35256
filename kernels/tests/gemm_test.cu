// GPU tests of the cuBLASLt GEMMs (every heuristic algorithm checked against the CPU reference on
// seeded random operands, BF16 / FP8 and the block-scaled formats where the device has them) and of
// the grouped GEMM over ragged expert loads, both implementations.
#include <algorithm>
#include <cstdio>
#include <string>

#include "kernels/blas_context.hpp"
#include "kernels/device_info.hpp"
#include "kernels/gemm_lt.hpp"
#include "kernels/gemm_operands.hpp"
#include "kernels/grouped_gemm.hpp"
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
  });
}
