#pragma once
// Time of a grouped GEMM over the experts of one rank with ragged token counts: each expert multiplies
// the tokens routed to it by its own weight matrix, all experts in one launch (Megatron's
// moe_grouped_gemm: TE GroupedLinear / CUTLASS grouped GEMM). Unlike a batched GEMM of equal
// problems, each expert's problem is tile-quantised on its own, so a small expert wastes more of its
// last tile than a large one, and two loads with the same total but different spreads cost differently.
#include <cstdint>
#include <span>

#include "compute/kernel_cost.hpp"

namespace moesim::compute {

/// Which GEMM of an expert's linear layer Y = X·W (W: k×n): the forward Y = X·W (fast accumulator),
/// the data gradient dX = dY·Wᵀ and the weight gradient dW = Xᵀ·dY (split accumulator) — the three
/// shapes LayerCostModel::add_gemm costs ({m,n,k}, {m,k,n}, {k,n,m}).
enum class GemmPart : std::uint8_t { kForward, kDgrad, kWgrad };

/// One grouped GEMM: `tokens[e]` rows (token copies) for local expert e, zero allowed; every expert's
/// weight is k × n.
struct GroupedGemmShape {
  std::span<const std::int64_t> tokens;
  std::int64_t n = 0, k = 0;
  GemmPart part = GemmPart::kForward;
};

/// max(compute, operand traffic) + one launch gap. Compute: every expert's problem is cut into the
/// output tiles the dense GEMM model uses (its m_e rounded up to the tile height; for the weight
/// gradient, whose inner dimension is m_e, the fixed per-tile K overhead weighs more on small experts),
/// the group's tiles run in waves over all SMs, and the tile giving the shortest time is taken, as for a
/// single GEMM. Traffic: each expert with tokens reads its whole weight (or writes its whole weight
/// gradient) however few tokens it has. Experts with no tokens cost nothing but the launch is still
/// paid once. With equal tokens this is exactly KernelCostModel::gemm of the batched shape.
/// With a calibration profile: that time × the measured / roofline ratio of the profile's grouped
/// GEMMs of the cost model's implementation, interpolated at (total tokens, n, k, experts)
/// (compute/profile_tables.hpp); the data gradient is looked up as the forward problem with n and k
/// swapped, the weight gradient takes its forward problem's ratio.
[[nodiscard]] Seconds grouped_gemm(const KernelCostModel& kernels, const GroupedGemmShape& shape, Precision precision);
/// The roofline alone, whatever the cost model's profile.
[[nodiscard]] Seconds grouped_gemm_roofline(const KernelCostModel& kernels, const GroupedGemmShape& shape,
                                            Precision precision);

/// The accumulator TE's FP8 recipes use for this part (see compute::Accumulation).
[[nodiscard]] Accumulation accumulation_of(GemmPart part);

}  // namespace moesim::compute
