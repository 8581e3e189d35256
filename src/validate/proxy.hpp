#pragma once
// The training proxy `moesim validate` runs and predicts: the scenario's layer shapes, precision,
// recompute and routing on the GPUs of one machine (docs/validation.md). What the proxy cannot
// reproduce is changed and said, one line each: no pipeline or context parallelism (one stage),
// TP and EP cut to divisors of the GPUs present, a stack of K layers of the model's MoE (or dense)
// layer without embedding and LM head, NCCL all-to-all dispatch, and a plain DP all-reduce and
// update after the backward (nothing overlapped).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace moesim::validate {

struct ProxyOptions {
  std::int64_t gpus = 1;                ///< GPUs of this machine the proxy runs on
  std::optional<std::int64_t> layers;   ///< layers in the stack; unset: the most that fit, up to 8
  std::int64_t microbatches = 2;        ///< gradient-accumulation micro-batches per step
  /// Routed experts of the proxy's MoE layers; unset: the model's. Fewer experts of the same shape,
  /// top-k and routing distribution make a layer of a many-expert model (DeepSeek-V3's 256) fit one
  /// GPU: at least top-k, at most the model's, a multiple of the proxy's EP.
  std::optional<std::int64_t> experts;
};

struct ProxyPlan {
  Scenario scenario;               ///< what the runner runs and the simulator predicts
  std::vector<std::string> notes;  ///< every change from the scenario, one line each
};

/// Layers in the default stack at most: enough for steady-state per-layer times, few enough to
/// fit one GPU for every preset model.
inline constexpr std::int64_t kMaxProxyLayers = 8;
/// Vocabulary the prediction gives the proxy model: the runner runs no embedding or LM head, and a
/// vocabulary this small makes theirs negligible in time and memory.
inline constexpr std::int64_t kProxyVocab = 128;

/// Throws InputError (naming the option or scenario path) when the proxy cannot be built: GPUs
/// outside one machine, a measured-histogram routing, --experts out of its range, or not even one
/// layer fitting in memory.
[[nodiscard]] ProxyPlan plan_proxy(const Scenario& s, const ProxyOptions& options);

}  // namespace moesim::validate
