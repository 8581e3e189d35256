#pragma once
// CPU reference of the GEMMs: Y[m x n] = X[m x k] * W[n x k]^T (Transformer Engine's forward
// "TN" layout: both operands K-contiguous, the only layout FP8 tensor cores take). Operands are
// the seeded random values of numeric.hpp, so any output element is recomputed from two rows.
#include <cstdint>
#include <string_view>

namespace moesim::kernels {

enum class GemmPrecision {
  kBf16,   ///< BF16 operands, FP32 accumulate, BF16 out
  kFp8,    ///< E4M3 operands with one FP32 scale per tensor (delayed/current scaling), BF16 out
  kMxfp8,  ///< E4M3 operands with a UE8M0 scale per 32 elements along K (sm_100+)
  kNvfp4,  ///< E2M1 operands with an E4M3 scale per 16 elements along K (sm_100+)
};

/// "bf16", "fp8", "mxfp8", "nvfp4": the profile's names.
[[nodiscard]] std::string_view precision_name(GemmPrecision p);

/// Random-data ranges: FP8 operands span most of E4M3's range and are scaled back by 1/amplitude,
/// as a per-tensor recipe does; block-scaled operands use block scale 1.
inline constexpr float kFp8InputAmplitude = 240.0f;
inline constexpr float kFp8WeightAmplitude = 120.0f;
inline constexpr float kMxfp8Amplitude = 2.0f;

/// Seeds of the two operands; element i of an operand is a function of (seed, i) alone.
inline constexpr std::uint64_t kGemmInputSeed = 0x5eed0001;
inline constexpr std::uint64_t kGemmWeightSeed = 0x5eed0002;

/// The decoded value of operand element `index` (weights when `weight`), before the per-tensor scale.
[[nodiscard]] float gemm_operand_value(GemmPrecision p, bool weight, std::uint64_t index);

/// The per-tensor dequantisation factor (1 / amplitude for FP8, 1 otherwise).
[[nodiscard]] float gemm_operand_scale(GemmPrecision p, bool weight);

/// Y(i, j) = sum_kk X(input_row, kk) * W(weight_row, kk) * scales, in double. input_row and
/// weight_row index the whole operand buffers (a grouped GEMM's experts are row ranges of them).
[[nodiscard]] double gemm_reference_entry(GemmPrecision p, std::int64_t k, std::int64_t input_row, std::int64_t weight_row);

/// Relative L2 tolerance of the output (BF16 rounding of the result, plus FP8 fast accumulation).
[[nodiscard]] double gemm_tolerance(GemmPrecision p);

}  // namespace moesim::kernels
