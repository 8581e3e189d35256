#include "memory/memory_result.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "memory/memory_timeline.hpp"

namespace moesim::memory {

MemoryResult memory_result(const Scenario& s, const std::vector<schedule::StageLayers>& stages,
                           double expert_load_factor, std::vector<std::string>& warnings) {
  MemoryOptions options;
  options.expert_load_factor = std::max(1.0, expert_load_factor);
  MemoryResult out;
  out.capacity_bytes = s.system.gpu.hbm_capacity.value();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const RankMemory m = rank_memory(s, static_cast<std::int64_t>(i), stages[i], options);
    StageMemory sm;
    sm.stage = static_cast<std::int64_t>(i);
    // The result's columns: the low-precision weight caches count as weights; the working buffers
    // (recomputed layer, permute buffers, logits) as activations; NCCL, context and fragmentation
    // as buffers.
    sm.weights_bytes = m.weights_bytes + m.low_precision_weight_bytes;
    sm.grads_bytes = m.gradients_bytes;
    sm.optimizer_bytes = m.optimizer_bytes;
    sm.activations_bytes = m.activations_bytes + m.activation_working_bytes;
    sm.buffers_bytes = m.comm_buffers_bytes + m.cuda_context_bytes + m.fragmentation_bytes;
    sm.peak_bytes = m.total_bytes();
    sm.peak_op = describe(timeline_peak(s, sm.stage, stages[i], m, options).op);
    out.peak_bytes = std::max(out.peak_bytes, sm.peak_bytes);
    out.per_stage.push_back(sm);
  }
  out.fits = out.peak_bytes <= out.capacity_bytes;
  if (!out.fits) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    warnings.push_back(fmt::format("predicted peak memory {:.1f} GiB exceeds the {:.1f} GiB of HBM per GPU",
                                   out.peak_bytes / kGiB, out.capacity_bytes / kGiB));
  }
  return out;
}

}  // namespace moesim::memory
