#pragma once
// Training precisions, with Megatron/Transformer Engine names.
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "core/named_enum.hpp"

namespace moesim {

enum class Precision { kBf16, kFp16, kFp8, kFp8Blockwise, kMxfp8, kNvfp4 };

/// Scenario spelling: "bf16", "fp16", "fp8" (per-tensor current/delayed scaling), "fp8-blockwise"
/// (DeepSeek-style 1x128 / 128x128), "mxfp8" (1x32 E8M0 scales, Blackwell), "nvfp4" (Blackwell).
inline constexpr auto kPrecisionNames = std::to_array<EnumName<Precision>>(
    {{Precision::kBf16, "bf16"}, {Precision::kFp16, "fp16"}, {Precision::kFp8, "fp8"},
     {Precision::kFp8Blockwise, "fp8-blockwise"}, {Precision::kMxfp8, "mxfp8"}, {Precision::kNvfp4, "nvfp4"}});
inline constexpr std::array<Precision, kPrecisionNames.size()> kAllPrecisions = values_of(kPrecisionNames);

[[nodiscard]] std::string_view to_string(Precision p);
[[nodiscard]] std::optional<Precision> precision_from_string(std::string_view s);
/// "bf16, fp16, fp8, fp8-blockwise, mxfp8, nvfp4"
[[nodiscard]] std::string all_precision_names();

/// How precision `fp8` scales its tensors: Megatron-Core's --fp8-recipe for per-tensor FP8
/// (megatron/training/arguments.py, default "delayed"). `delayed` is Transformer Engine's DelayedScaling
/// (a scale from an amax history the module keeps and updates), `tensorwise` its Float8CurrentScaling
/// (the scale from the tensor's own amax). mxfp8 and fp8-blockwise are precisions of their own.
enum class Fp8Recipe { kDelayed, kTensorwise };
inline constexpr auto kFp8RecipeNames =
    std::to_array<EnumName<Fp8Recipe>>({{Fp8Recipe::kDelayed, "delayed"}, {Fp8Recipe::kTensorwise, "tensorwise"}});

/// An 8- or 4-bit recipe (anything but bf16 and fp16): what Transformer Engine quantises.
[[nodiscard]] constexpr bool is_low_precision(Precision p) { return p != Precision::kBf16 && p != Precision::kFp16; }

/// Bytes of one GEMM operand element in this precision (scales excluded).
[[nodiscard]] double gemm_operand_bytes(Precision p);

/// Bytes per element of an activation tensor as the recipe quantises it for a GEMM, scales included:
/// 2 in bf16/fp16; fp8 1 (one scale per tensor); fp8-blockwise 1 + an fp32 scale per 1x128 block;
/// mxfp8 1 + an E8M0 scale per 32; nvfp4 0.5 + an E4M3 scale per 16. What Transformer Engine
/// saves for the weight gradient and what its all-gathers move.
[[nodiscard]] double quantized_activation_bytes(Precision p);

}  // namespace moesim
