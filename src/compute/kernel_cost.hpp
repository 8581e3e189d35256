#pragma once
// Time of the kernels of a training step on one GPU, from its datasheet and microbenchmark figures:
// a roofline whose compute ceiling depends on the GEMM's shape (tile and wave quantisation, short-K
// overhead), not one global efficiency. With a calibration profile (docs/profile.md) the roofline is
// corrected by the measured / roofline ratio interpolated among the profile's rows
// (compute/profile_tables.hpp), and every query is counted by what answered it.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "compute/profile_tables.hpp"
#include "compute/query_log.hpp"
#include "core/precision.hpp"
#include "core/units.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/profile.hpp"

namespace moesim::compute {

/// C[m×n] = A[m×k] · B[k×n], `batch` independent problems of that shape.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t batch = 1;
};

/// How a low-precision GEMM accumulates. Transformer Engine's FP8 recipes run the forward GEMM with
/// the tensor core's fast (reduced-precision) accumulator and the two backward GEMMs with a split
/// accumulator that promotes partial sums to FP32 (recipe MMParams: fprop use_split_accumulator=False,
/// dgrad and wgrad True).
enum class Accumulation : std::uint8_t { kFast, kSplit };

/// One attention-core call (FlashAttention-style or unfused) over `batch_heads` = micro-batch × local heads.
struct AttentionShape {
  std::int64_t batch_heads = 0;
  std::int64_t query_len = 0;
  std::int64_t key_span = 0;   ///< keys each query attends to before causal masking (seq or window)
  std::int64_t head_dim_qk = 0;
  std::int64_t head_dim_v = 0;
  bool causal = true;
  /// Ring context parallelism: the pass runs as this many calls (1: one call; see
  /// attention_efficiency.hpp). query_len is then the rank's share and key_span the whole span.
  std::int64_t cp_ring_steps = 1;
};

class KernelCostModel {
 public:
  /// `profile`: the calibration profile to interpolate in (nullptr: the roofline alone); it must have
  /// been made on `gpu` (config/ checks). `grouped`: the grouped-GEMM implementation the framework runs
  /// (Megatron's moe_grouped_gemm: grouped_batched; without it: a loop of GEMMs), whose profile rows
  /// price the expert GEMMs.
  explicit KernelCostModel(const hw::GpuSpec& gpu, std::shared_ptr<const hw::Profile> profile = nullptr,
                           hw::GroupedImplementation grouped = hw::GroupedImplementation::kGroupedBatched);

  /// Time of one GEMM (or a batch of equal GEMMs): max(compute at shape-dependent efficiency,
  /// operand traffic at achievable HBM bandwidth) + launch gap.
  [[nodiscard]] Seconds gemm(const GemmShape& shape, Precision precision,
                             Accumulation accumulation = Accumulation::kFast) const;
  /// Factor (>= 1) by which a GEMM of this precision and accumulation mode runs slower than with the
  /// fast accumulator the sustained GEMM ceilings were measured with.
  [[nodiscard]] double accumulation_slowdown(Precision precision, Accumulation accumulation) const;
  /// Fraction of the precision's dense peak this shape reaches (compute ceiling only), its K loop
  /// cut into `split_k` slices that run as separate tiles.
  [[nodiscard]] double gemm_efficiency(const GemmShape& shape, std::int64_t split_k = 1) const;
  /// The K slices the GEMM runs in: 1, or for an output of less than one wave of tiles the power of
  /// two (≤ 16, each slice ≥ 256 deep) whose better SM fill outweighs its FP32 partial-sum traffic
  /// at `sustained_peak`.
  [[nodiscard]] std::int64_t split_k_slices(const GemmShape& shape, FlopsPerSecond sustained_peak) const;
  /// A memory-bound kernel (norms, activations, casts, permutes) moving `bytes` through HBM. With a
  /// profile: bytes / the achieved bandwidth of `kind` interpolated at `bytes` (copy: every streaming
  /// kernel without a table of its own), no separate launch gap (the measurement includes it).
  [[nodiscard]] Seconds memory_bound(Bytes bytes, hw::MemoryKernel kind = hw::MemoryKernel::kCopy) const;
  /// The same traffic fused into a neighbouring kernel: no launch of its own.
  [[nodiscard]] Seconds memory_bound_fused(Bytes bytes, hw::MemoryKernel kind = hw::MemoryKernel::kCopy) const;
  /// FLOPs of the attention core's forward pass (QKᵀ and PV, causal half skipped).
  [[nodiscard]] static Flops attention_forward_flops(const AttentionShape& shape);
  /// Fused (FlashAttention) forward / backward time; attention runs in BF16 whatever the GEMM precision.
  [[nodiscard]] Seconds flash_attention_forward(const AttentionShape& shape) const;
  [[nodiscard]] Seconds flash_attention_backward(const AttentionShape& shape) const;
  /// Unfused attention (batched QKᵀ GEMM, softmax, dropout, PV GEMM; full s×s materialised, the mask
  /// saves no work), as Megatron ran before FlashAttention. With unfused attention rows in the profile,
  /// the core without dropout is its roofline × the interpolated ratio, plus the dropout memory-bound.
  [[nodiscard]] Seconds unfused_attention_forward(const AttentionShape& shape, Precision precision) const;
  [[nodiscard]] Seconds unfused_attention_backward(const AttentionShape& shape, Precision precision) const;

  [[nodiscard]] const hw::GpuSpec& gpu() const { return gpu_; }
  [[nodiscard]] Seconds launch_gap() const { return launch_gap_; }

  /// The calibration profile (nullptr: roofline only) and what this model's queries were answered from.
  [[nodiscard]] const hw::Profile* profile() const { return profile_.get(); }
  [[nodiscard]] const KernelProfileTables* profile_tables() const { return tables_.get(); }
  [[nodiscard]] const KernelProfileUsage& profile_usage() const { return usage_; }
  [[nodiscard]] hw::GroupedImplementation grouped_implementation() const { return grouped_; }
  /// True when the profile has grouped-GEMM rows of this precision for the model's implementation
  /// (the expert GEMMs are then priced from them; a measured loop includes its per-expert launches).
  [[nodiscard]] bool calibrated_grouped(Precision precision) const;
  /// Measured / roofline ratio of a grouped GEMM whose forward problem has `total_tokens` rows over
  /// `experts` experts of k × n weights, counted in the usage (nullopt: no rows, roofline). The weight
  /// gradient (`wgrad`) has no rows of its own and takes its forward problem's ratio.
  [[nodiscard]] std::optional<double> grouped_ratio(double total_tokens, std::int64_t n, std::int64_t k,
                                                    std::int64_t experts, Precision precision, bool wgrad) const;

  /// Collects every shape queried from now on into `log` (nullptr: stop); `moesim calibrate` uses it.
  void log_queries(KernelQueryLog* log) { log_ = log; }
  [[nodiscard]] KernelQueryLog* query_log() const { return log_; }

  /// The roofline alone, whatever the profile (what the profile's ratios are taken against).
  [[nodiscard]] Seconds roofline_gemm(const GemmShape& shape, Precision precision,
                                      Accumulation accumulation = Accumulation::kFast) const;
  [[nodiscard]] Seconds roofline_flash_attention_forward(const AttentionShape& shape) const;
  [[nodiscard]] Seconds roofline_flash_attention_backward(const AttentionShape& shape) const;
  /// The unfused core without dropout (batched GEMMs + the softmax's bytes), what kernels/attention
  /// runs and the calibrator's unfused rows are ratios to.
  [[nodiscard]] Seconds roofline_unfused_attention_forward(const AttentionShape& shape, Precision precision) const;
  [[nodiscard]] Seconds roofline_unfused_attention_backward(const AttentionShape& shape, Precision precision) const;

  /// An output tile the GEMM heuristic may pick and the fraction of the large-tile throughput it
  /// sustains; public so that other GEMM-like kernels (compute/grouped_gemm) quantise alike.
  struct TileOption {
    std::int64_t rows, cols;
    double relative_efficiency;
  };
  [[nodiscard]] static std::span<const TileOption> tile_options();
  /// Fixed per-tile prologue/epilogue, in K elements (the short-K overhead of gemm_efficiency).
  [[nodiscard]] static double tile_k_overhead();

 private:
  /// The profile's ratio for an attention call, counted (nullopt: no rows, roofline).
  [[nodiscard]] std::optional<double> attention_ratio(const AttentionShape& shape, hw::AttentionImplementation impl,
                                                      hw::AttentionDirection d) const;
  /// A flash-attention call in direction `d`: its roofline times the profile's ratio.
  [[nodiscard]] Seconds flash_attention(const AttentionShape& shape, Seconds roofline, hw::AttentionDirection d) const;

  hw::GpuSpec gpu_;
  FlopsPerSecond bf16_peak_;
  BytesPerSecond achievable_hbm_;
  Seconds launch_gap_;
  std::shared_ptr<const hw::Profile> profile_;
  std::shared_ptr<const KernelProfileTables> tables_;
  hw::GroupedImplementation grouped_ = hw::GroupedImplementation::kGroupedBatched;
  /// Counters, not strings: the planner queries ~10^5 candidates (a model serves one thread).
  mutable KernelProfileUsage usage_;
  KernelQueryLog* log_ = nullptr;
};

}  // namespace moesim::compute
