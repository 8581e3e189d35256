#pragma once
// The host side of the op program: how many framework-level ops (a PyTorch op or a Transformer Engine
// module call: Python, the dispatcher, autograd bookkeeping, the CUDA launch) the CPU runs to issue
// each kernel and collective of a unit in an eager Megatron-Core step, which CUDA-graph scope can
// capture it, and where the host waits for the GPU. Both fidelities read the result from the ops:
// `LayerOp::host_s` (the host seconds to issue the op) and `LayerOp::host_sync` (the host first waits
// until the GPU has finished everything issued before).
#include <cstdint>
#include <string_view>

#include "program/layer_cost.hpp"

namespace moesim::program {

/// The part of a transformer layer a CUDA-graph scope captures (scenario/runtime.hpp's scopes).
enum class GraphRegion : std::uint8_t {
  kAttention,      ///< input norm through the attention output projection and its TP collective
  kDenseMlp,       ///< a dense MLP block (with its fused pre-MLP norm)
  kMoeRouter,      ///< the MoE block's pre-MLP norm, router GEMM, score function and top-k
  kMoePreprocess,  ///< the dispatcher's token counting after the router
  kMoeBlock,       ///< the rest of the MoE block: permute, all-to-alls, experts, unpermute, shared experts
  kLayer,          ///< the residual adds: only a whole-layer graph holds them
  kOutside,        ///< embedding, LM head, loss, MTP projection: only the full-iteration graph
};

/// Framework ops one op costs the host when it runs eagerly, per pass, and its graph region.
struct HostOps {
  double forward = 0;   ///< also a recomputed forward
  double backward = 0;  ///< the op's backward (a GEMM's autograd node is counted on its data gradient)
  GraphRegion region = GraphRegion::kOutside;
};

/// The host figures of an op named `name` (LayerOp::name) in scenario `s`. Throws InternalError for a
/// name the table does not know, so that a new op cannot go unpriced.
[[nodiscard]] HostOps host_ops(std::string_view name, const Scenario& s);

/// Sets `host_s` and `host_sync` of every op of `p` (a unit's program as LayerCostModel builds it):
/// framework ops × the host's seconds per op, nothing inside a captured CUDA graph but one replay per
/// captured run of ops, and the token-count read-back of an eager dropless MoE forward.
void price_host(OpProgram& p, const Scenario& s);

}  // namespace moesim::program
