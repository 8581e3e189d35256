#pragma once
// Time of the kernels of a training step on one GPU, from its datasheet and microbenchmark figures:
// a roofline whose compute ceiling depends on the GEMM's shape (tile and wave quantisation, short-K
// overhead), not one global efficiency. The calibration issue adds measured tables in front of it.
#include <cstdint>
#include <span>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "hw/gpu_spec.hpp"

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
};

class KernelCostModel {
 public:
  explicit KernelCostModel(const hw::GpuSpec& gpu);

  /// Time of one GEMM (or a batch of equal GEMMs): max(compute at shape-dependent efficiency,
  /// operand traffic at achievable HBM bandwidth) + launch gap.
  [[nodiscard]] Seconds gemm(const GemmShape& shape, Precision precision,
                             Accumulation accumulation = Accumulation::kFast) const;
  /// Factor (>= 1) by which a GEMM of this precision and accumulation mode runs slower than with the
  /// fast accumulator the sustained GEMM ceilings were measured with.
  [[nodiscard]] double accumulation_slowdown(Precision precision, Accumulation accumulation) const;
  /// Fraction of the precision's dense peak this shape reaches (compute ceiling only).
  [[nodiscard]] double gemm_efficiency(const GemmShape& shape) const;
  /// A memory-bound kernel (norms, activations, casts, permutes) moving `bytes` through HBM.
  [[nodiscard]] Seconds memory_bound(Bytes bytes) const;
  /// FLOPs of the attention core's forward pass (QKᵀ and PV, causal half skipped).
  [[nodiscard]] static Flops attention_forward_flops(const AttentionShape& shape);
  /// Fused (FlashAttention) forward / backward time; attention runs in BF16 whatever the GEMM precision.
  [[nodiscard]] Seconds flash_attention_forward(const AttentionShape& shape) const;
  [[nodiscard]] Seconds flash_attention_backward(const AttentionShape& shape) const;
  /// Unfused attention (batched QKᵀ GEMM, softmax, dropout, PV GEMM; full s×s materialised, the mask
  /// saves no work), as Megatron ran before FlashAttention.
  [[nodiscard]] Seconds unfused_attention_forward(const AttentionShape& shape, Precision precision) const;
  [[nodiscard]] Seconds unfused_attention_backward(const AttentionShape& shape, Precision precision) const;

  [[nodiscard]] const hw::GpuSpec& gpu() const { return gpu_; }
  [[nodiscard]] Seconds launch_gap() const { return launch_gap_; }

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
  hw::GpuSpec gpu_;
  FlopsPerSecond bf16_peak_;
  BytesPerSecond achievable_hbm_;
  Seconds launch_gap_;
};

}  // namespace moesim::compute
