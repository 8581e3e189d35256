#include "kernels/reference/gemm_ref.hpp"

#include "kernels/numeric.hpp"

namespace moesim::kernels {

std::string_view precision_name(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kBf16: return "bf16";
    case GemmPrecision::kFp8: return "fp8";
    case GemmPrecision::kMxfp8: return "mxfp8";
    case GemmPrecision::kNvfp4: return "nvfp4";
  }
  return "?";
}

float gemm_operand_value(GemmPrecision p, bool weight, std::uint64_t index) {
  const std::uint64_t seed = weight ? kGemmWeightSeed : kGemmInputSeed;
  switch (p) {
    case GemmPrecision::kBf16: return bf16_to_float(random_bf16(seed, index));
    case GemmPrecision::kFp8: return e4m3_to_float(random_e4m3(seed, index, weight ? kFp8WeightAmplitude : kFp8InputAmplitude));
    case GemmPrecision::kMxfp8: return e4m3_to_float(random_e4m3(seed, index, kMxfp8Amplitude));
    case GemmPrecision::kNvfp4: return e2m1_to_float(random_e2m1(seed, index));
  }
  return 0;
}

float gemm_operand_scale(GemmPrecision p, bool weight) {
  if (p != GemmPrecision::kFp8) return 1.0f;
  return 1.0f / (weight ? kFp8WeightAmplitude : kFp8InputAmplitude);
}

double gemm_reference_entry(GemmPrecision p, std::int64_t k, std::int64_t input_row, std::int64_t weight_row) {
  double sum = 0;
  const auto x0 = static_cast<std::uint64_t>(input_row * k);
  const auto w0 = static_cast<std::uint64_t>(weight_row * k);
  for (std::int64_t kk = 0; kk < k; ++kk) {
    sum += static_cast<double>(gemm_operand_value(p, false, x0 + static_cast<std::uint64_t>(kk))) *
           gemm_operand_value(p, true, w0 + static_cast<std::uint64_t>(kk));
  }
  return sum * gemm_operand_scale(p, false) * gemm_operand_scale(p, true);
}

double gemm_tolerance(GemmPrecision p) { return p == GemmPrecision::kBf16 ? 1e-2 : 3e-2; }

}  // namespace moesim::kernels
