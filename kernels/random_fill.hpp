#pragma once
// Device buffers filled with the seeded random values of numeric.hpp (element i is a function of
// (seed, i) alone), so CPU references regenerate any element without copying the buffer back.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace moesim::kernels {

/// p[i] = float_to_bf16(random_uniform(seed, i) * amplitude)
void fill_random_bf16(std::uint16_t* p, std::size_t n, std::uint64_t seed, float amplitude, cudaStream_t stream);
/// p[i] = random_uniform(seed, i) * amplitude + offset
void fill_random_f32(float* p, std::size_t n, std::uint64_t seed, float amplitude, float offset, cudaStream_t stream);
/// p[i] = random_e4m3(seed, i, amplitude)
void fill_random_e4m3(std::uint8_t* p, std::size_t n, std::uint64_t seed, float amplitude, cudaStream_t stream);
/// `elements` E2M1 codes random_e2m1(seed, i), two per byte, element 2b in the low nibble of byte b
/// (cuBLASLt's CUDA_R_4F_E2M1 packing); `elements` must be even.
void fill_random_e2m1(std::uint8_t* packed, std::size_t elements, std::uint64_t seed, cudaStream_t stream);

}  // namespace moesim::kernels
