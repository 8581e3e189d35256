#include "core/precision.hpp"

#include <string>

#include "core/format.hpp"

namespace moesim {

std::string_view to_string(Precision p) { return name_of(kPrecisionNames, p); }

std::optional<Precision> precision_from_string(std::string_view s) { return value_of(kPrecisionNames, s); }

std::string all_precision_names() { return join(names_of(kPrecisionNames)); }

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
