#pragma once
// The shape of one training step as a rank sees it, derived from the scenario once and handed to the
// op program, the estimate and the simulation (each used to work these numbers out again).
#include <cstdint>

#include "collective/closed_form.hpp"
#include "scenario/scenario.hpp"

namespace moesim::schedule {

/// Rank 0's process groups placed on NVLink domains from their actual members.
struct GroupLayout {
  collective::GroupPlacement tp, cp, ep, etp, dp, edp, pp;
};

/// Places rank 0's groups in Megatron's rank order (schedule::Layout); `pp` is the pair of
/// neighbouring stages that exchange activations.
[[nodiscard]] GroupLayout place_groups(const Scenario& s);

/// Tokens of a rank's sequence slice per micro-batch: micro_batch_size · seq_length / cp.
[[nodiscard]] std::int64_t rank_tokens(const Scenario& s);

/// An MoE model whose routing is not balanced: the EP ranks of a stage carry different loads.
[[nodiscard]] bool routing_skewed(const Scenario& s);

struct StepShape {
  std::int64_t tokens = 0;       ///< rank_tokens: what attention and the dense GEMMs see
  std::int64_t sp_tokens = 0;    ///< tokens held between blocks (÷ tp with sequence parallelism); the MoE block routes these
  double boundary_bytes = 0;     ///< one micro-batch's activations (or their gradients) across a stage boundary, 16-bit
  std::int64_t microbatches = 0; ///< per pipeline per step
  bool routing_skewed = false;
  /// Ranks the simulation runs: one per stage under balanced routing (each stands for its stage),
  /// every EP rank of each stage under skew.
  std::int64_t simulated_ranks = 0;
  GroupLayout groups;
};

/// The scenario must have passed validate_layout.
[[nodiscard]] StepShape step_shape(const Scenario& s);

}  // namespace moesim::schedule
