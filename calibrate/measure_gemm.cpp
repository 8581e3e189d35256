// GEMMs through cuBLASLt (every heuristic algorithm checked, then timed: the heuristic's first
// choice is "our call", the fastest is the best the library has) and the grouped expert GEMMs.
#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "calibrate/measure.hpp"
#include "calibrate/measure_internal.hpp"
#include "kernels/gemm_lt.hpp"
#include "kernels/gemm_operands.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/reference/compare.hpp"

namespace moesim::calibrate {
namespace {

constexpr int kMaxAlgorithms = 8;
constexpr int kSamples = 64;

std::optional<kernels::GemmPrecision> parse_precision(Precision precision) {
  const std::string_view name = to_string(precision);
  for (const auto p : {kernels::GemmPrecision::kBf16, kernels::GemmPrecision::kFp8, kernels::GemmPrecision::kMxfp8, kernels::GemmPrecision::kNvfp4}) {
    if (kernels::precision_name(p) == name) return p;
  }
  return std::nullopt;
}

void measure_one_gemm(MeasureContext& ctx, const GemmTask& task, kernels::GemmPrecision p, hw::Profile& profile) {
  const kernels::GemmShape shape{task.m, task.n, task.k};
  const std::string what = fmt::format("gemm {} {}x{}x{}", to_string(task.precision), task.m, task.n, task.k);
  kernels::LtMatmul gemm(ctx.blas.lt(), p, shape, ctx.blas.workspace_bytes(), kMaxAlgorithms);
  if (!gemm.supported()) {
    note_unsupported(ctx, fmt::format("{}: {}", what, gemm.unsupported_reason()));
    return;
  }
  kernels::GemmOperands operands(p, task.m, task.n, task.n, task.k, ctx.stream);
  const kernels::Comparison first = kernels::check_gemm_samples(gemm, operands, 0, kSamples, ctx.blas.lt_workspace(), ctx.stream);
  kernels::require_close(first, kernels::gemm_tolerance(p), what + " heuristic#0");
  hw::ProfileTiming ours;
  double best = 0;
  int best_index = 0;
  for (int a = 0; a < gemm.algorithm_count(); ++a) {
    if (a > 0) {
      // An alternative that computes something else is not a candidate for "best".
      const kernels::Comparison c = kernels::check_gemm_samples(gemm, operands, a, kSamples / 4, ctx.blas.lt_workspace(), ctx.stream);
      if (!c.ok(kernels::gemm_tolerance(p))) {
        ctx.log.warning(fmt::format("{} heuristic#{} excluded: {}", what, a, c.describe()));
        continue;
      }
    }
    const kernels::Summary s = kernels::time_launches(ctx.stream, [&] { gemm.run(operands.whole(), a, ctx.blas.lt_workspace(), ctx.stream); },
                                                      timing_plan(ctx.plan.repeats, a > 0));
    if (a == 0) ours = to_timing(s);
    if (a == 0 || s.median < best) {
      best = s.median;
      best_index = a;
    }
  }
  const double tflops = 2.0 * static_cast<double>(task.m) * static_cast<double>(task.n) * static_cast<double>(task.k) / (ours.median_us * 1e-6) / 1e12;
  ctx.log.detail(fmt::format("  {}: heuristic#0 {:.2f} us (spread {:.2f}, {:.0f} TFLOP/s), best of {} heuristic#{} {:.2f} us: ours at {:.1f}% of best",
                             what, ours.median_us, ours.spread_us, tflops, gemm.algorithm_count(), best_index, best, 100.0 * best / ours.median_us));
  profile.gemm.push_back(hw::ProfileGemm{task.precision, task.m, task.n, task.k, ours, "heuristic#0", best});
}

}  // namespace

void measure_gemm(MeasureContext& ctx, hw::Profile& profile) {
  if (ctx.plan.gemm.empty()) return;
  ctx.log.progress(fmt::format("gemm: {} shapes x precisions (cuBLASLt, up to {} heuristic algorithms each)", ctx.plan.gemm.size(), kMaxAlgorithms));
  for (const GemmTask& task : ctx.plan.gemm) {
    const auto p = parse_precision(task.precision);
    if (!p) continue;  // the request loader admits only the four names
    if (const std::string why = kernels::gemm_precision_problem(*p, ctx.device.cc_major, ctx.device.cc_minor); !why.empty()) {
      note_unsupported(ctx, fmt::format("{} GEMM: {}", to_string(task.precision), why));
      continue;
    }
    guarded(ctx, fmt::format("gemm {} {}x{}x{}", to_string(task.precision), task.m, task.n, task.k), [&] { measure_one_gemm(ctx, task, *p, profile); });
  }
}

void measure_grouped_gemm(MeasureContext& ctx, hw::Profile& profile) {
  if (ctx.plan.grouped.empty()) return;
  ctx.log.progress(fmt::format("grouped gemm: {} expert loads (cublasGemmGroupedBatchedEx and the cuBLASLt loop)", ctx.plan.grouped.size()));
  for (const GroupedTask& task : ctx.plan.grouped) {
    const int total = std::accumulate(task.tokens.begin(), task.tokens.end(), 0);
    const std::string what = fmt::format("grouped gemm {} experts {} ({} rows) n {} k {}", task.tokens.size(), task.load, total, task.n, task.k);
    guarded(ctx, what, [&] {
      kernels::GroupedGemm grouped(ctx.blas, kernels::GroupedGemmShape{task.tokens, task.n, task.k});
      std::string line = "  " + what + ":";
      for (const bool batched : {false, true}) {
        const hw::GroupedImplementation implementation = batched ? hw::GroupedImplementation::kGroupedBatched : hw::GroupedImplementation::kLoop;
        const std::string_view name = hw::to_string(implementation);
        if (batched && !grouped.grouped_batched_problem().empty()) {
          note_unsupported(ctx, grouped.grouped_batched_problem());
          continue;
        }
        kernels::require_close(grouped.check(batched, 8, ctx.stream), kernels::gemm_tolerance(kernels::GemmPrecision::kBf16), what + " " + std::string(name));
        const kernels::Summary s = kernels::time_launches(ctx.stream, [&] {
          batched ? grouped.run_grouped_batched(ctx.stream) : grouped.run_loop(ctx.stream);
        }, timing_plan(ctx.plan.repeats));
        const double tflops = 2.0 * total * static_cast<double>(task.n) * static_cast<double>(task.k) / (s.median * 1e-6) / 1e12;
        line += fmt::format(" {} {:.2f} us ({:.0f} TFLOP/s);", name, s.median, tflops);
        profile.grouped_gemm.push_back(hw::ProfileGroupedGemm{Precision::kBf16, implementation, {task.tokens.begin(), task.tokens.end()}, task.n, task.k, to_timing(s)});
      }
      ctx.log.detail(line);
    });
  }
}

}  // namespace moesim::calibrate
