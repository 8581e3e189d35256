#pragma once
// Bounds of the scenario's integer and number fields. Far above any real run (the largest published
// clusters have ~10^5 GPUs, the longest trained contexts ~10^6 tokens), they refuse absurd inputs
// (10^12 GPUs, seq 2^40) before any allocation or overflowing product: every product of parallel
// sizes stays below 2^63.
#include <cstdint>
#include <limits>

#include "config/json_reader.hpp"

namespace moesim::config::scenario_limits {

inline constexpr std::int64_t kMaxGpus = 1'048'576;  ///< 2^20
inline constexpr IntRange kGpus{1, kMaxGpus};
inline constexpr IntRange kParallelSize{1, kMaxGpus};
inline constexpr IntRange kSeqLength{1, 16'777'216};          ///< 2^24 tokens
inline constexpr IntRange kMicroBatch{1, 65'536};
inline constexpr IntRange kGlobalBatch{1, 16'777'216};        ///< sequences per step
inline constexpr IntRange kDeviceLimitedNodes{0, kMaxGpus};   ///< 0 = unlimited
inline constexpr IntRange kDispatcherSms{1, 1024};             ///< the GPU's SM count is checked later
inline constexpr IntRange kSeed{0, std::numeric_limits<std::int64_t>::max()};
inline constexpr NumberRange kCapacityFactor{0.0, 1024.0, true};
/// Per MoE layer forward; published eager runs differ by 4.45 to 8.05 ms (docs/accuracy.md, Round 5),
/// so a second is far past any real figure and catches a value given in milliseconds.
inline constexpr NumberRange kHostSyncIdleS{0.0, 1.0, false};
inline constexpr NumberRange kZipfS{0.0, 100.0, true};
inline constexpr NumberRange kLognormalSigma{0.0, 100.0, false};
inline constexpr NumberRange kDirichletAlpha{0.0, 1e6, true};

}  // namespace moesim::config::scenario_limits
