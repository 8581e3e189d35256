#pragma once
// CPU reference of the BF16 -> FP8 E4M3 cast with per-tensor scaling (Transformer Engine's recipe:
// scale = 448 / amax, stored value = e4m3(x * scale), dequantised value = stored / scale).
#include <cstddef>
#include <cstdint>

namespace moesim::kernels {

/// max |x| over n BF16 values (0 for n == 0); NaN when any input is NaN, as the GPU reduction and
/// Transformer Engine's amax give.
[[nodiscard]] float amax_reference(const std::uint16_t* x, std::size_t n);

/// 448 / amax, in float exactly as the device computes it; 1 when amax is zero or not finite.
[[nodiscard]] float fp8_scale_from_amax(float amax);

/// e4m3(bf16(x) * scale), round to nearest even, saturating: bit-exact with the device cast.
[[nodiscard]] std::uint8_t cast_fp8_reference(std::uint16_t x, float scale);

}  // namespace moesim::kernels
