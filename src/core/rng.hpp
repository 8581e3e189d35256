#pragma once
// Seeded, named random streams. Every random draw in moesim comes from a stream named after what it
// draws ("routing/layer3/step0"), so adding a new consumer never shifts the numbers another one sees,
// and the same (seed, name) gives the same sequence on every platform (no std:: distributions, whose
// output is implementation-defined).
#include <cstdint>
#include <string_view>

namespace moesim {

/// xoshiro256** seeded through SplitMix64 from (seed, FNV-1a(name)).
class RngStream {
 public:
  RngStream(std::uint64_t seed, std::string_view name);

  [[nodiscard]] std::uint64_t next_u64();
  /// Uniform in [0, 1) with 53 random bits.
  [[nodiscard]] double uniform();
  /// Standard normal (Box-Muller with a cached second value).
  [[nodiscard]] double normal();
  /// Uniform integer in [0, n) without modulo bias; n > 0.
  [[nodiscard]] std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t s_[4]{};
  double cached_normal_ = 0.0;
  bool has_cached_normal_ = false;
};

/// 64-bit FNV-1a of a string: stable across runs and platforms (std::hash is not).
[[nodiscard]] std::uint64_t fnv1a64(std::string_view text);

}  // namespace moesim
