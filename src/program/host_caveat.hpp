#pragma once
// The host time eager Megatron MoE runs that read the token counts back (dropless, or a capacity factor
// without padding) pay and moesim does not price (docs/accuracy.md, Round 5), as a caveat results and
// plans state: its size per (MoE layer, micro-batch) pass from published runs, and what it would add to
// one layout's step.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::program {

struct DroplessHostCaveat {
  std::int64_t stage = 0;   ///< the pipeline stage with the most MoE layers (the first of equals)
  std::int64_t passes = 0;  ///< its MoE layers × micro-batches
  double low_s = 0;         ///< passes × the smaller published per-pass difference
  double high_s = 0;        ///< passes × the larger one
};

/// Per-pass bounds, seconds (the source is in host_caveat.cpp).
[[nodiscard]] double dropless_host_gap_low_s();
[[nodiscard]] double dropless_host_gap_high_s();

/// The caveat for an MoE scenario whose dispatcher reads the token counts back (every one but a
/// padded-to-capacity run) laid out as `stages`; nothing for a dense model, a padded one or one whose
/// moe.host_sync_idle_s prices the host time. Every
/// stage pays host time for each of its own MoE passes and the pipeline runs at its slowest stage's
/// pace, so the stage with the most MoE layers sizes it, whichever stage the unpriced step's critical
/// path runs through; results and plans use this one measure.
[[nodiscard]] std::optional<DroplessHostCaveat> dropless_host_caveat(const Scenario& s,
                                                                     const std::vector<schedule::StageLayers>& stages);

/// The result warning that states it for a step of `step_time_s`.
[[nodiscard]] std::string dropless_host_warning(const DroplessHostCaveat& c, double step_time_s);

}  // namespace moesim::program
