#pragma once
// Number formats and the seeded random data every kernel check and timing runs on, written once
// for both sides: device code (nvcc) fills buffers with these functions and the CPU references
// (plain C++) regenerate any element from (seed, index), so a check never copies a whole operand
// back and the host and device agree bit for bit on every input.
#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MOESIM_HD __host__ __device__
#else
#define MOESIM_HD
#endif

namespace moesim::kernels {

// ---- seeded random values -------------------------------------------------------------------

/// splitmix64's finaliser: a bijective 64-bit mix, so (seed, index) pairs never collide.
MOESIM_HD inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

MOESIM_HD inline std::uint64_t random_bits(std::uint64_t seed, std::uint64_t index) {
  return mix64(seed * 0x9e3779b97f4a7c15ULL + index);
}

/// Uniform in [-1, 1) with 24 random bits: k * 2^-23 - 1 is exact in float, so the value does not
/// depend on the compiler's floating-point contraction on either side.
MOESIM_HD inline float random_uniform(std::uint64_t seed, std::uint64_t index) {
  const auto k = static_cast<std::uint32_t>(random_bits(seed, index) >> 40);
  return static_cast<float>(k) * (1.0f / 8388608.0f) - 1.0f;
}

// ---- bit casts --------------------------------------------------------------------------------

MOESIM_HD inline std::uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

MOESIM_HD inline float bits_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// ---- bfloat16 ---------------------------------------------------------------------------------

/// Round to nearest even, as __float2bfloat16_rn does; NaN stays a (quiet) NaN.
MOESIM_HD inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

MOESIM_HD inline float bf16_to_float(std::uint16_t b) { return bits_float(static_cast<std::uint32_t>(b) << 16); }

// ---- FP8 E4M3 (OCP "fn": no infinities, 0x7f/0xff are NaN, largest finite 448) -------------------

inline constexpr float kE4m3Max = 448.0f;

/// Round to nearest even with saturation to +-448, as __nv_cvt_float_to_fp8(x, __NV_SATFINITE,
/// __NV_E4M3) does; NaN becomes 0x7f.
MOESIM_HD inline std::uint8_t float_to_e4m3(float f) {
  const std::uint32_t u = float_bits(f);
  const auto sign = static_cast<std::uint8_t>((u >> 24) & 0x80u);
  const std::uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7f;
  if (abs >= 0x43e80000u) return static_cast<std::uint8_t>(sign | 0x7e);  // >= 464 rounds past 448
  const int exp = static_cast<int>(abs >> 23) - 127;
  const std::uint64_t full = (abs & 0x7fffffu) | (exp > -127 ? 0x800000u : 0u);
  // Units of the result's last place: 2^(e-3) for normals (e >= -6), 2^-9 for subnormals.
  const int lsb_exp = exp >= -6 ? exp - 3 : -9;
  const int shift = 23 - exp + lsb_exp;  // right shift of `full` that lands on that unit
  std::uint64_t q = 0;
  if (shift < 64) {
    q = full >> shift;
    const std::uint64_t rem = full & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
  }
  std::uint32_t bits;
  if (exp >= -6) {
    // q holds the implicit bit at 8; carrying to 16 moves to the next binade.
    int e = exp;
    if (q == 16) {
      q = 8;
      ++e;
    }
    bits = (static_cast<std::uint32_t>(e + 7) << 3) | static_cast<std::uint32_t>(q & 7u);
  } else {
    bits = static_cast<std::uint32_t>(q);  // 8 is the smallest normal, 0x08, encoded the same way
  }
  if (bits > 0x7e) bits = 0x7e;
  return static_cast<std::uint8_t>(sign | bits);
}

MOESIM_HD inline float e4m3_to_float(std::uint8_t b) {
  const int e = (b >> 3) & 0xf;
  const int m = b & 7;
  float v;
  if ((b & 0x7f) == 0x7f) {
    v = bits_float(0x7fc00000u);
  } else if (e == 0) {
    v = static_cast<float>(m) * (1.0f / 512.0f);
  } else {
    v = (1.0f + static_cast<float>(m) * 0.125f) * bits_float(static_cast<std::uint32_t>(e - 7 + 127) << 23);
  }
  return (b & 0x80) ? -v : v;
}

// ---- FP4 E2M1 (NVFP4 / MXFP4 element) ------------------------------------------------------------

MOESIM_HD inline float e2m1_to_float(std::uint8_t nibble) {
  const int e = (nibble >> 1) & 3;
  const int m = nibble & 1;
  const float v = e == 0 ? 0.5f * static_cast<float>(m) : (1.0f + 0.5f * static_cast<float>(m)) * static_cast<float>(1 << (e - 1));
  return (nibble & 8) ? -v : v;
}

// ---- the random operands of the GEMM checks ------------------------------------------------------
// Every operand element is a pure function of (seed, index), so a sampled output element can be
// recomputed on the host from the two operand rows alone.

/// bf16 operand: uniform in [-1, 1), rounded to bf16.
MOESIM_HD inline std::uint16_t random_bf16(std::uint64_t seed, std::uint64_t i) {
  return float_to_bf16(random_uniform(seed, i));
}

/// FP8 operand: uniform in [-amplitude, amplitude) rounded to E4M3; amplitude <= 448.
MOESIM_HD inline std::uint8_t random_e4m3(std::uint64_t seed, std::uint64_t i, float amplitude) {
  return float_to_e4m3(random_uniform(seed, i) * amplitude);
}

/// FP4 operand: every one of the 16 E2M1 codes equally likely.
MOESIM_HD inline std::uint8_t random_e2m1(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint8_t>(random_bits(seed, i) & 0xfu);
}

}  // namespace moesim::kernels
