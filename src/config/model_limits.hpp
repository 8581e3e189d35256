#pragma once
// Bounds of every integer a model definition or an HF config.json may hold. They are far above any
// real model (DeepSeek-V3: 61 layers, hidden 7168, 256 experts) and keep absurd inputs from reaching
// an allocation (the per-layer pattern) or an overflowing product. (And the one probability, kDropout.)
#include "config/json_reader.hpp"

namespace moesim::config::model_limits {

inline constexpr IntRange kLayers{1, 4096};
inline constexpr IntRange kHidden{1, 1'048'576};
inline constexpr IntRange kHeads{1, 65'536};
inline constexpr IntRange kHeadDim{1, 65'536};
inline constexpr IntRange kHeadDimOrZero{0, 65'536};
inline constexpr IntRange kFfn{1, 16'777'216};
inline constexpr IntRange kFfnOrZero{0, 16'777'216};  ///< 0 = no dense layers / no shared experts
inline constexpr IntRange kVocab{1, 16'777'216};
inline constexpr IntRange kExperts{0, 65'536};  ///< 0 = dense
inline constexpr IntRange kTopk{1, 65'536};
inline constexpr IntRange kSharedExperts{0, 65'536};
inline constexpr IntRange kLayerStep{1, 4096};
inline constexpr IntRange kLayerCount{0, 4096};
inline constexpr IntRange kMtpLayers{0, 64};
inline constexpr IntRange kLatentRank{1, 1'048'576};
inline constexpr IntRange kLatentRankOrZero{0, 1'048'576};  ///< q_lora_rank 0 = no query compression
inline constexpr IntRange kWindow{0, 16'777'216};           ///< 0 = full attention
inline constexpr IntRange kWindowPattern{0, 4096};
/// A dropout probability (PyTorch accepts 0 ≤ p ≤ 1).
inline constexpr NumberRange kDropout{0.0, 1.0};

}  // namespace moesim::config::model_limits
