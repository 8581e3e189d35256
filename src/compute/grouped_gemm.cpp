#include "compute/grouped_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moesim::compute {
namespace {

/// C[m×n] = A[m×k]·B[k×n] of one expert in this part (the shapes LayerCostModel::add_gemm uses).
struct Problem {
  double m, n, k;
};

Problem problem_of(GemmPart part, std::int64_t tokens, std::int64_t n, std::int64_t k) {
  const auto t = static_cast<double>(tokens);
  const auto nn = static_cast<double>(n);
  const auto kk = static_cast<double>(k);
  switch (part) {
    case GemmPart::kDgrad: return {t, kk, nn};
    case GemmPart::kWgrad: return {kk, nn, t};
    case GemmPart::kForward: break;
  }
  return {t, nn, kk};
}

/// Compute time of the group with one tile choice: waves of the whole group's tiles over the SMs,
/// each wave as long as the group's mean tile (tiles of one part share their depth except in the
/// weight gradient, where a persistent grouped kernel spreads the deep and shallow tiles over the SMs).
double tile_time(const GroupedGemmShape& g, const KernelCostModel::TileOption& tile, double sms,
                 double flops_per_sm_s) {
  double tiles = 0, depth_sum = 0;
  for (const std::int64_t tokens : g.tokens) {
    if (tokens <= 0) continue;
    const Problem p = problem_of(g.part, tokens, g.n, g.k);
    const double t = std::ceil(p.m / static_cast<double>(tile.rows)) * std::ceil(p.n / static_cast<double>(tile.cols));
    tiles += t;
    depth_sum += t * (p.k + KernelCostModel::tile_k_overhead());
  }
  if (tiles <= 0) return 0;
  const double waves = std::ceil(tiles / sms);
  const double tile_flops = 2.0 * static_cast<double>(tile.rows * tile.cols) * (depth_sum / tiles);
  return waves * tile_flops / (flops_per_sm_s * tile.relative_efficiency);
}

double compute_seconds(const KernelCostModel& kernels, const GroupedGemmShape& g, Precision precision) {
  const hw::GpuSpec& gpu = kernels.gpu();
  const FlopsPerSecond peak = gpu.peak(precision).value_or(gpu.peak(Precision::kBf16).value_or(FlopsPerSecond(0)));
  const double sms = static_cast<double>(gpu.sm_count);
  // One SM at the precision's sustained ceiling with the largest tile (KernelCostModel::gemm's
  // efficiency × ceiling ratio, written per SM: the same formula with the tile counts kept apart).
  const double flops_per_sm_s = peak.value() * gpu.gemm_efficiency_ceiling(precision) * gpu.sustained_tensor_rate / sms;
  double best = std::numeric_limits<double>::infinity();
  for (const KernelCostModel::TileOption& tile : KernelCostModel::tile_options()) {
    best = std::min(best, tile_time(g, tile, sms, flops_per_sm_s));
  }
  return best * kernels.accumulation_slowdown(precision, accumulation_of(g.part));
}

/// Operands in, result out, for every expert with tokens (KernelCostModel::gemm's traffic per problem):
/// the weight operand (or the weight gradient written) is whole whatever the expert's token count.
double traffic_bytes(const GroupedGemmShape& g, Precision precision) {
  const double in_bytes = gemm_operand_bytes(precision);
  double bytes = 0;
  for (const std::int64_t tokens : g.tokens) {
    if (tokens <= 0) continue;
    const Problem p = problem_of(g.part, tokens, g.n, g.k);
    bytes += in_bytes * (p.m * p.k + p.k * p.n) + 2.0 * p.m * p.n;
  }
  return bytes;
}

}  // namespace

Accumulation accumulation_of(GemmPart part) {
  return part == GemmPart::kForward ? Accumulation::kFast : Accumulation::kSplit;
}

Seconds grouped_gemm_roofline(const KernelCostModel& kernels, const GroupedGemmShape& shape, Precision precision) {
  if (shape.n <= 0 || shape.k <= 0) return Seconds(0);
  const double compute = compute_seconds(kernels, shape, precision);
  const double bytes = traffic_bytes(shape, precision);
  // The operand traffic at the datasheet's achievable HBM bandwidth plus one launch gap (as
  // memory_bound() without a profile); a group with no tokens at all still launches once.
  const double memory = bytes > 0 ? bytes / (kernels.gpu().hbm_bandwidth.value() * kernels.gpu().hbm_efficiency) +
                                        kernels.launch_gap().value()
                                  : kernels.launch_gap().value();
  return Seconds(std::max(compute + kernels.launch_gap().value(), memory));
}

Seconds grouped_gemm(const KernelCostModel& kernels, const GroupedGemmShape& shape, Precision precision) {
  if (KernelQueryLog* log = kernels.query_log(); log && shape.n > 0 && shape.k > 0 && shape.part != GemmPart::kWgrad) {
    const bool dgrad = shape.part == GemmPart::kDgrad;
    log->grouped.insert({precision, dgrad ? shape.k : shape.n, dgrad ? shape.n : shape.k,
                         std::vector<std::int64_t>(shape.tokens.begin(), shape.tokens.end())});
  }
  const Seconds roofline = grouped_gemm_roofline(kernels, shape, precision);
  if (!kernels.profile_tables() || roofline.value() <= 0) return roofline;
  double total = 0;
  for (const std::int64_t t : shape.tokens) total += static_cast<double>(std::max<std::int64_t>(t, 0));
  // The profile's rows are forward problems (tokens × k)·(k × n). The data gradient is one with n and
  // k swapped; the weight gradient (inner dimension: the tokens) takes its forward problem's ratio.
  const bool dgrad = shape.part == GemmPart::kDgrad;
  const auto ratio = kernels.grouped_ratio(total, dgrad ? shape.k : shape.n, dgrad ? shape.n : shape.k,
                                           static_cast<std::int64_t>(shape.tokens.size()), precision,
                                           shape.part == GemmPart::kWgrad);
  return ratio ? roofline * *ratio : roofline;
}

}  // namespace moesim::compute
