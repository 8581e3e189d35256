#include "core/precision.hpp"

#include <string>

namespace moesim {

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
    case Precision::kFp8Blockwise: return "fp8-blockwise";
    case Precision::kMxfp8: return "mxfp8";
    case Precision::kNvfp4: return "nvfp4";
  }
  return "?";
}

std::optional<Precision> precision_from_string(std::string_view s) {
  for (Precision p : kAllPrecisions) {
    if (to_string(p) == s) return p;
  }
  return std::nullopt;
}

std::string all_precision_names() {
  std::string out;
  for (Precision p : kAllPrecisions) {
    if (!out.empty()) out += ", ";
    out += to_string(p);
  }
  return out;
}

double gemm_operand_bytes(Precision p) {
  switch (p) {
    case Precision::kBf16:
    case Precision::kFp16: return 2.0;
    case Precision::kFp8:
    case Precision::kFp8Blockwise:
    case Precision::kMxfp8: return 1.0;
    case Precision::kNvfp4: return 0.5;
  }
  return 2.0;
}

double quantized_activation_bytes(Precision p) {
  switch (p) {
    case Precision::kBf16:
    case Precision::kFp16: return 2.0;
    case Precision::kFp8: return 1.0;
    case Precision::kFp8Blockwise: return 1.0 + 4.0 / 128.0;
    case Precision::kMxfp8: return 1.0 + 1.0 / 32.0;
    case Precision::kNvfp4: return 0.5 + 1.0 / 16.0;
  }
  return 2.0;
}

}  // namespace moesim
