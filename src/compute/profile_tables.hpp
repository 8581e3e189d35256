#pragma once
// A calibration profile (hw::Profile, docs/profile.md) turned into lookup tables for the kernel cost
// model, once per profile and GPU spec (cached in the profile: the planner builds a cost model per
// candidate), and the counters a cost model keeps of what its queries were answered from.
//
// Shaped kernels (GEMM, grouped GEMM, attention) store, per measured row, the log of measured time /
// roofline time of the same shape; a query multiplies its own roofline time by the ratio interpolated
// in log space of its sizes: inverse-distance weighting (power 2) over the kNeighbours nearest rows,
// exact at a measured row. Memory-bound kernels store achieved bandwidth against bytes, interpolated
// piecewise-linearly in log-log. A query outside the measured range is clamped to it (per size) and
// counted as such; a query with no rows of its kind falls back to the roofline and is counted too.
// Queries allocate nothing: tables are sorted and sized at build time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/precision.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/profile.hpp"

namespace moesim::compute {

class KernelCostModel;

inline constexpr std::size_t kPrecisionCount = kAllPrecisions.size();
[[nodiscard]] constexpr std::size_t index_of(Precision p) { return static_cast<std::size_t>(p); }

/// How the queries of one kind were answered.
struct QueryCounts {
  std::int64_t interpolated = 0;  ///< from the profile, inside its measured range
  std::int64_t outside = 0;       ///< from the profile, clamped to its measured range
  std::int64_t fallback = 0;      ///< no rows of this kind: the roofline
  [[nodiscard]] std::int64_t from_profile() const { return interpolated + outside; }
  [[nodiscard]] std::int64_t total() const { return interpolated + outside + fallback; }
};

/// Counters of one kernel cost model's queries, by the table that answers them.
struct KernelProfileUsage {
  std::array<QueryCounts, kPrecisionCount> gemm{};          ///< single GEMMs, by precision
  std::array<QueryCounts, kPrecisionCount> batched_gemm{};  ///< batch > 1 (unfused attention): no table
  std::array<QueryCounts, kPrecisionCount> grouped{};       ///< grouped GEMMs of the cost model's implementation
  std::int64_t grouped_wgrad = 0;  ///< weight-gradient groups priced with their forward problem's ratio
  std::array<QueryCounts, hw::kMemoryKernelCount> memory{};
  /// [implementation][direction]: flash and unfused attention queries, each answered by its own rows.
  std::array<std::array<QueryCounts, 2>, hw::kAttentionImplementationCount> attention{};
};

/// Rows of one shaped kernel: log sizes and log(measured / roofline).
struct RatioTable {
  static constexpr std::size_t kMaxDims = 4;
  static constexpr std::size_t kNeighbours = 4;
  struct Point {
    std::array<double, kMaxDims> x{};
    double log_ratio = 0;
  };
  std::size_t dims = 0;
  std::vector<Point> points;
  std::array<double, kMaxDims> lo{}, hi{};  ///< measured range per size (log)

  [[nodiscard]] bool empty() const { return points.empty(); }
  /// exp(interpolated log ratio) at `x` (clamped into [lo, hi]); `outside` says whether it was.
  [[nodiscard]] double ratio(std::array<double, kMaxDims> x, bool& outside) const;
};

/// Achieved bandwidth against bytes, sorted by bytes (equal sizes merged by their mean log bandwidth).
struct BandwidthCurve {
  std::vector<double> log_bytes;
  std::vector<double> log_bandwidth;  ///< log(bytes / s)
  [[nodiscard]] bool empty() const { return log_bytes.empty(); }
  /// Bandwidth (bytes/s) at `bytes`, the end points' beyond the measured range (`outside` set).
  [[nodiscard]] double bandwidth(double bytes, bool& outside) const;
  /// Builds the curve from (bytes, seconds) points.
  static BandwidthCurve from_points(std::vector<std::pair<double, double>> bytes_seconds);
};

/// Everything the kernel cost model looks up, for one profile on one GPU spec.
struct KernelProfileTables {
  /// GEMM: log m, log n, log k per precision.
  std::array<RatioTable, kPrecisionCount> gemm;
  /// Grouped GEMM: log total tokens, log n, log k, log experts per precision and implementation.
  std::array<std::array<RatioTable, 2>, kPrecisionCount> grouped;
  std::array<BandwidthCurve, hw::kMemoryKernelCount> memory;
  /// Attention: log batch_heads, log seq, log head_dim, per [implementation][direction][causal]. Flash
  /// rows are ratios to the flash roofline; unfused rows to the unfused core without dropout
  /// (KernelCostModel::roofline_unfused_attention_*), the kernel the calibrator times.
  std::array<std::array<std::array<RatioTable, 2>, 2>, hw::kAttentionImplementationCount> attention;
};

/// Builds the tables of `profile` against `roofline`, a cost model without a profile for the GPU
/// the profile was made on.
[[nodiscard]] std::shared_ptr<const KernelProfileTables> build_kernel_tables(const hw::Profile& profile,
                                                                             const KernelCostModel& roofline);

/// The cached tables of `profile` for `gpu` (built on first use).
[[nodiscard]] std::shared_ptr<const KernelProfileTables> kernel_tables(const hw::Profile& profile,
                                                                       const hw::GpuSpec& gpu);

}  // namespace moesim::compute
