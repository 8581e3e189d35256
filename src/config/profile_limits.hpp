#pragma once
// Bounds of every figure a calibration profile (docs/profile.md) may hold. Far above anything a GPU
// measures, they refuse absurd values (10^9 rows, a 2^60-byte message) before any table is built.
#include <cstdint>

#include "config/json_reader.hpp"

namespace moesim::config::profile_limits {

inline constexpr std::int64_t kMaxRows = 1'000'000;              ///< rows per table
inline constexpr std::int64_t kMaxExperts = 65'536;               ///< entries of a grouped GEMM's tokens array
inline constexpr std::int64_t kMaxCitations = 100'000;
inline constexpr std::int64_t kMaxShapeKeys = 64;                 ///< named dimensions of a kernel's shape
inline constexpr IntRange kGemmDim{1, 16'777'216};                ///< m, n, k: 2^24
inline constexpr IntRange kExpertTokens{0, 16'777'216};           ///< rows of one expert (0: no tokens)
inline constexpr IntRange kBytes{1, std::int64_t{1} << 40};       ///< 1 TiB
inline constexpr IntRange kShapeValue{1, std::int64_t{1} << 40};
inline constexpr IntRange kBatchHeads{1, 16'777'216};
inline constexpr IntRange kSeq{1, 16'777'216};
inline constexpr IntRange kHeadDim{1, 65'536};
inline constexpr IntRange kRanks{2, 1'048'576};                   ///< a collective needs two ranks
inline constexpr IntRange kRanksPerNode{1, 1'048'576};
inline constexpr IntRange kRepeats{1, 1'000'000'000};
inline constexpr IntRange kSmCount{1, 1'000'000};
inline constexpr IntRange kGpusVisible{1, 1'048'576};
inline constexpr NumberRange kMicroseconds{0.0, 1e12, true};      ///< > 0: a time, up to ~11.6 days
inline constexpr NumberRange kSpread{0.0, 1e12, false};           ///< p90 − p10 >= 0
inline constexpr NumberRange kGBps{0.0, 1e6, true};               ///< bandwidth, GB/s (1e9 B/s)
inline constexpr NumberRange kClockMHz{0.0, 1e6, true};
/// busbw and algbw must agree with bytes / median time within this relative tolerance (they are
/// derived from the same timing; published figures are rounded to a few digits).
inline constexpr double kBandwidthTolerance = 0.05;

}  // namespace moesim::config::profile_limits
