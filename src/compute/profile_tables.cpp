#include "compute/profile_tables.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "compute/grouped_gemm.hpp"
#include "compute/kernel_cost.hpp"

namespace moesim::compute {
namespace {

// Two log-space points closer than this are the same point (sizes are integers: log distances
// between different shapes are >= log(1 + 1/2^24) ≈ 6e-8).
constexpr double kSamePoint = 1e-18;

void finish_ranges(RatioTable& t) {
  for (std::size_t d = 0; d < t.dims; ++d) {
    t.lo[d] = std::numeric_limits<double>::infinity();
    t.hi[d] = -std::numeric_limits<double>::infinity();
  }
  for (const auto& p : t.points) {
    for (std::size_t d = 0; d < t.dims; ++d) {
      t.lo[d] = std::min(t.lo[d], p.x[d]);
      t.hi[d] = std::max(t.hi[d], p.x[d]);
    }
  }
  // Sorted, and rows at the same point (grouped GEMMs of equal totals but different spreads) merged
  // by their mean log ratio, so that a query there gets one answer whatever the file's order.
  std::stable_sort(t.points.begin(), t.points.end(),
                   [](const RatioTable::Point& a, const RatioTable::Point& b) { return a.x < b.x; });
  std::vector<RatioTable::Point> merged;
  for (std::size_t i = 0; i < t.points.size();) {
    RatioTable::Point p = t.points[i];
    double sum = 0;
    std::size_t j = i;
    for (; j < t.points.size() && t.points[j].x == p.x; ++j) sum += t.points[j].log_ratio;
    p.log_ratio = sum / static_cast<double>(j - i);
    merged.push_back(p);
    i = j;
  }
  t.points = std::move(merged);
}

/// The cost-relevant figures of two GPU specs agree (the tables depend on nothing else).
bool same_figures(const hw::GpuSpec& a, const hw::GpuSpec& b) {
  return a.name == b.name && a.architecture == b.architecture && a.sm_count == b.sm_count &&
         a.dense_peak == b.dense_peak && a.gemm_peak_efficiency == b.gemm_peak_efficiency &&
         a.gemm_peak_efficiency_by_precision == b.gemm_peak_efficiency_by_precision &&
         a.hbm_bandwidth.value() == b.hbm_bandwidth.value() && a.hbm_efficiency == b.hbm_efficiency &&
         a.attention_efficiency == b.attention_efficiency;
}

}  // namespace

double RatioTable::ratio(std::array<double, kMaxDims> x, bool& outside) const {
  outside = false;
  for (std::size_t d = 0; d < dims; ++d) {
    // A tolerance of a few ulps keeps a query at a measured edge inside.
    if (x[d] < lo[d] - 1e-12) {
      x[d] = lo[d];
      outside = true;
    } else if (x[d] > hi[d] + 1e-12) {
      x[d] = hi[d];
      outside = true;
    }
  }
  // The kNeighbours nearest rows, kept sorted by distance in a fixed array (no allocation).
  std::array<double, kNeighbours> best_d2{};
  std::array<double, kNeighbours> best_ratio{};
  std::size_t found = 0;
  for (const Point& p : points) {
    double d2 = 0;
    for (std::size_t d = 0; d < dims; ++d) {
      const double diff = p.x[d] - x[d];
      d2 += diff * diff;
    }
    if (d2 <= kSamePoint) return std::exp(p.log_ratio);  // exact at a measured row
    if (found == kNeighbours && d2 >= best_d2[kNeighbours - 1]) continue;
    std::size_t i = found < kNeighbours ? found++ : kNeighbours - 1;
    while (i > 0 && best_d2[i - 1] > d2) {
      best_d2[i] = best_d2[i - 1];
      best_ratio[i] = best_ratio[i - 1];
      --i;
    }
    best_d2[i] = d2;
    best_ratio[i] = p.log_ratio;
  }
  // Inverse-distance weighting, power 2, of the log ratios.
  double weight_sum = 0, value = 0;
  for (std::size_t i = 0; i < found; ++i) {
    const double w = 1.0 / best_d2[i];
    weight_sum += w;
    value += w * best_ratio[i];
  }
  return found == 0 ? 1.0 : std::exp(value / weight_sum);
}

double BandwidthCurve::bandwidth(double bytes, bool& outside) const {
  const double x = std::log(bytes);
  outside = x < log_bytes.front() - 1e-12 || x > log_bytes.back() + 1e-12;
  if (x <= log_bytes.front()) return std::exp(log_bandwidth.front());
  if (x >= log_bytes.back()) return std::exp(log_bandwidth.back());
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(log_bytes.begin(), log_bytes.end(), x) - log_bytes.begin());
  const std::size_t lo = hi - 1;
  const double t = (x - log_bytes[lo]) / (log_bytes[hi] - log_bytes[lo]);
  return std::exp(log_bandwidth[lo] + t * (log_bandwidth[hi] - log_bandwidth[lo]));
}

BandwidthCurve BandwidthCurve::from_points(std::vector<std::pair<double, double>> bytes_seconds) {
  std::sort(bytes_seconds.begin(), bytes_seconds.end());
  BandwidthCurve c;
  std::size_t i = 0;
  while (i < bytes_seconds.size()) {
    const double bytes = bytes_seconds[i].first;
    double sum = 0;
    std::size_t count = 0;
    for (; i < bytes_seconds.size() && bytes_seconds[i].first == bytes; ++i, ++count) {
      sum += std::log(bytes / bytes_seconds[i].second);
    }
    c.log_bytes.push_back(std::log(bytes));
    c.log_bandwidth.push_back(sum / static_cast<double>(count));
  }
  return c;
}

std::shared_ptr<const KernelProfileTables> build_kernel_tables(const hw::Profile& profile,
                                                               const KernelCostModel& roofline) {
  auto t = std::make_shared<KernelProfileTables>();
  for (auto& table : t->gemm) table.dims = 3;
  for (auto& by_impl : t->grouped) {
    for (auto& table : by_impl) table.dims = 4;
  }
  for (auto& by_direction : t->attention) {
    for (auto& by_causal : by_direction) {
      for (auto& table : by_causal) table.dims = 3;
    }
  }
  for (const hw::ProfileGemm& g : profile.gemm) {
    const double model = roofline.roofline_gemm({g.m, g.n, g.k, 1}, g.precision).value();
    const double measured = g.time.median_us * 1e-6;
    t->gemm[index_of(g.precision)].points.push_back(
        {{std::log(static_cast<double>(g.m)), std::log(static_cast<double>(g.n)), std::log(static_cast<double>(g.k)), 0},
         std::log(measured / model)});
  }
  for (const hw::ProfileGroupedGemm& g : profile.grouped_gemm) {
    const double model =
        grouped_gemm_roofline(roofline, {g.tokens, g.n, g.k, GemmPart::kForward}, g.precision).value();
    double total = 0;
    for (const std::int64_t tokens : g.tokens) total += static_cast<double>(tokens);
    const double measured = g.time.median_us * 1e-6;
    t->grouped[index_of(g.precision)][static_cast<std::size_t>(g.implementation)].points.push_back(
        {{std::log(total), std::log(static_cast<double>(g.n)), std::log(static_cast<double>(g.k)),
          std::log(static_cast<double>(g.tokens.size()))},
         std::log(measured / model)});
  }
  std::array<std::vector<std::pair<double, double>>, hw::kMemoryKernelCount> memory_points;
  for (const hw::ProfileKernel& k : profile.kernels) {
    memory_points[static_cast<std::size_t>(k.kernel)].emplace_back(static_cast<double>(k.bytes), k.time.median_us * 1e-6);
  }
  for (std::size_t i = 0; i < hw::kMemoryKernelCount; ++i) {
    if (!memory_points[i].empty()) t->memory[i] = BandwidthCurve::from_points(std::move(memory_points[i]));
  }
  for (const hw::ProfileAttention& a : profile.attention) {
    AttentionShape shape;
    shape.batch_heads = a.batch_heads;
    shape.query_len = a.seq;
    shape.key_span = a.seq;
    shape.head_dim_qk = a.head_dim;
    shape.head_dim_v = a.head_dim;
    shape.causal = a.causal;
    const bool forward = a.direction == hw::AttentionDirection::kForward;
    // Each row is a ratio to the roofline of the kernel it timed, the same function a query of that
    // implementation multiplies by it, so a query at a measured shape returns the measured time. The
    // calibrator's unfused kernel runs in BF16 and has no dropout (the query adds the dropout's bytes).
    double model = 0;
    if (a.implementation == hw::AttentionImplementation::kFlash) {
      model = (forward ? roofline.roofline_flash_attention_forward(shape)
                       : roofline.roofline_flash_attention_backward(shape))
                  .value();
    } else {
      model = (forward ? roofline.roofline_unfused_attention_forward(shape, Precision::kBf16)
                       : roofline.roofline_unfused_attention_backward(shape, Precision::kBf16))
                  .value();
    }
    const double measured = a.time.median_us * 1e-6;
    t->attention[static_cast<std::size_t>(a.implementation)][static_cast<std::size_t>(a.direction)][a.causal ? 1 : 0]
        .points.push_back(
        {{std::log(static_cast<double>(a.batch_heads)), std::log(static_cast<double>(a.seq)),
          std::log(static_cast<double>(a.head_dim)), 0},
         std::log(measured / model)});
  }
  for (auto& table : t->gemm) finish_ranges(table);
  for (auto& by_impl : t->grouped) {
    for (auto& table : by_impl) finish_ranges(table);
  }
  for (auto& by_direction : t->attention) {
    for (auto& by_causal : by_direction) {
      for (auto& table : by_causal) finish_ranges(table);
    }
  }
  return t;
}

std::shared_ptr<const KernelProfileTables> kernel_tables(const hw::Profile& profile, const hw::GpuSpec& gpu) {
  return profile.derived.for_gpu<KernelProfileTables>(gpu, same_figures, [&] {
    const KernelCostModel roofline(gpu);
    return build_kernel_tables(profile, roofline);
  });
}

}  // namespace moesim::compute
