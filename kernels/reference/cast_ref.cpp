#include "kernels/reference/cast_ref.hpp"

#include <cmath>

#include "kernels/numeric.hpp"

namespace moesim::kernels {

float amax_reference(const std::uint16_t* x, std::size_t n) {
  // The largest sign-less pattern: the largest |x|, or a NaN pattern when any input is NaN.
  std::uint16_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<std::uint16_t>(x[i] & 0x7fffu);
    if (a > m) m = a;
  }
  return bf16_to_float(m);
}

float fp8_scale_from_amax(float amax) {
  if (!(amax > 0.0f) || !std::isfinite(amax)) return 1.0f;
  return kE4m3Max / amax;
}

std::uint8_t cast_fp8_reference(std::uint16_t x, float scale) { return float_to_e4m3(bf16_to_float(x) * scale); }

}  // namespace moesim::kernels
