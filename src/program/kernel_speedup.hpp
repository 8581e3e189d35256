#pragma once
// whatif.kernel_speedup applied to the op program: every op of a class the scenario speeds up runs
// factor× as fast (its time and its latency), in both fidelities, since both evaluate these ops.
#include "program/layer_cost.hpp"
#include "scenario/whatif.hpp"

namespace moesim::program {

/// Divides the time of every op of a sped-up class by its factor and records the factor in
/// `LayerOp::speedup` (the simulation's ragged re-costing of the expert GEMMs applies it again).
void apply_kernel_speedup(OpProgram& program, const WhatIfSpec& whatif);

}  // namespace moesim::program
