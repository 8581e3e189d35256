#include "program/host_caveat.hpp"

#include <fmt/format.h>

namespace moesim::program {
namespace {

// Eager Megatron runs of a dropless MoE pay a host cost per (MoE layer, micro-batch) that moesim does
// not price: the dispatcher reads the token counts back every MoE forward and the CPU, its lead gone,
// sets the pace. Two pairs of Megatron-Bridge rows that differ only in token-drop against dropless
// routing bound it (tests/validation/published.json, Qwen3-30B-A3B; the routers are force-balanced,
// so both rows of a pair do the same GPU work): B200 EP8, mbs 1, 25.09 against 25.11,
// (28.19 - 14.51) s / (64 micro-batches x 48 layers) = 4.45 ms; H100 PP2 VPP24 EP8, mbs 2, 25.09
// against 25.11, (24.85 - 12.49) s / (32 x 48) = 8.05 ms. A caveat, not a term of the prediction:
// two runs' differences are not a measured per-op cost.
constexpr double kDroplessHostGapLowS = 4.45e-3;
constexpr double kDroplessHostGapHighS = 8.05e-3;

}  // namespace

double dropless_host_gap_low_s() { return kDroplessHostGapLowS; }
double dropless_host_gap_high_s() { return kDroplessHostGapHighS; }

std::optional<DroplessHostCaveat> dropless_host_caveat(const Scenario& s,
                                                       const std::vector<schedule::StageLayers>& stages) {
  // A scenario that gives its own host_sync_idle_s has it priced (moe.host_sync_idle_s); a step captured
  // as one CUDA graph launches nothing per kernel and cannot synchronise with the host inside it (its
  // dropless MoE runs Megatron's sync-free path: the recipes pair full_iteration with a rank capacity
  // factor and the paged stash).
  if (!s.model.is_moe() || !s.moe.reads_token_counts_back() || s.moe.host_sync_idle_s > 0 ||
      s.runtime.full_iteration_graph()) {
    return std::nullopt;
  }
  std::int64_t most_layers = 0;
  std::int64_t most_stage = 0;
  for (std::size_t st = 0; st < stages.size(); ++st) {
    std::int64_t layers = 0;
    for (const std::int64_t layer : stages[st].layers) layers += s.model.layer_is_moe(layer) ? 1 : 0;
    if (layers > most_layers) {
      most_layers = layers;
      most_stage = static_cast<std::int64_t>(st);
    }
  }
  if (most_layers == 0) return std::nullopt;
  DroplessHostCaveat c;
  c.stage = most_stage;
  c.passes = most_layers * s.num_microbatches();
  c.low_s = static_cast<double>(c.passes) * kDroplessHostGapLowS;
  c.high_s = static_cast<double>(c.passes) * kDroplessHostGapHighS;
  return c;
}

std::string dropless_host_warning(const DroplessHostCaveat& c, double step_time_s) {
  return fmt::format(
      "MoE host time: eager Megatron runs whose dispatcher reads the token counts back (dropless, or a capacity "
      "factor without padding) pay host time per (MoE layer, micro-batch) pass that moesim does not price: published token-drop and dropless runs of one layout differ by {:.2f} to {:.2f} ms per pass "
      "(docs/accuracy.md, Round 5); stage {}, the one with the most MoE layers, runs {} passes, so this {:.3g} s "
      "step may take {:.3g} to {:.3g} s longer (runtime.cuda_graph full_iteration runs sync-free and pays none of it); "
      "moe.host_sync_idle_s prices a figure measured on your stack",
      1e3 * kDroplessHostGapLowS, 1e3 * kDroplessHostGapHighS, c.stage, c.passes, step_time_s, c.low_s, c.high_s);
}

}  // namespace moesim::program
