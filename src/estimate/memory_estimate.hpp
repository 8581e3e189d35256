#pragma once
// First per-stage memory estimate (weights, gradients, optimizer state, activations of the
// micro-batches in flight, buffers). The memory-model issue replaces it with per-rank timelines.
#include <vector>

#include "schedule/stage_params.hpp"
#include "scenario/result.hpp"

namespace moesim::estimate {

using schedule::RankParams;
using schedule::StageLayers;

/// Activation bytes one transformer layer keeps for the backward pass, per micro-batch, on one rank.
[[nodiscard]] double layer_activation_bytes(const Scenario& s, bool moe);

/// Micro-batches (in units of a whole stage's activations) pipeline rank `stage` holds at its
/// peak: min(m, pp − stage) for 1F1B; Megatron's interleaved warm-up count / vpp with VPP.
[[nodiscard]] double inflight_microbatches(const Scenario& s, std::int64_t stage);

[[nodiscard]] MemoryResult estimate_memory(const Scenario& s, const std::vector<StageLayers>& stages,
                                           const std::vector<RankParams>& params, std::vector<std::string>& warnings);

}  // namespace moesim::estimate
