#pragma once
// BF16 -> FP8 E4M3 casts with per-tensor scaling and amax, as Transformer Engine's recipes run them
// (the CPU reference is reference/cast_ref.hpp). Scales and amax are device floats.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace moesim::kernels {

/// *amax = max |x| over n BF16 values (NaN propagates, as in Transformer Engine).
void amax_bf16(const std::uint16_t* x, std::size_t n, float* amax, cudaStream_t stream);

/// Delayed scaling, one pass: out = e4m3(x * *scale) with the scale kept from earlier steps, while
/// *amax_out = max |x| (for the next step's scale) and *scale_inv_out = 1 / *scale.
void cast_fp8_delayed(const std::uint16_t* x, std::size_t n, const float* scale, std::uint8_t* out, float* amax_out,
                      float* scale_inv_out, cudaStream_t stream);

/// Current scaling, two passes: *amax = max |x|, then *scale = 448 / *amax (1 when it is zero or
/// not finite), *scale_inv = 1 / *scale and out = e4m3(x * *scale).
void cast_fp8_current(const std::uint16_t* x, std::size_t n, std::uint8_t* out, float* amax, float* scale, float* scale_inv,
                      cudaStream_t stream);

/// Bytes through HBM of the one-pass cast: 2 read + 1 written per element.
[[nodiscard]] std::size_t cast_fp8_delayed_bytes(std::size_t n);
/// ... and of the two-pass cast: the amax pass reads the input once more.
[[nodiscard]] std::size_t cast_fp8_current_bytes(std::size_t n);

}  // namespace moesim::kernels
