#pragma once
// How the length of the sequences a fused-attention kernel sees changes its efficiency.
//
// A FlashAttention-style kernel gives each CTA one 128-row query tile and loops over key tiles; a
// causal kernel computes the diagonal tiles whole and masks half of them. Each query tile also pays
// a fixed prologue/epilogue (loading Q, rescaling and writing O), worth `kAttentionTileOverhead` key
// tiles. Short sequences therefore run further below the long-sequence rate, causal ones more so.
// Ring context parallelism (Transformer Engine's cp_comm_type p2p) splits one long kernel into cp
// shorter ones per pass, which is where this matters most.
#include <cstdint>

namespace moesim::compute {

struct AttentionShape;

/// Fraction of the kernel's time spent on unmasked score tiles for one call over `query_len` queries
/// and `key_len` keys (causal: the square lower triangle when the two are equal).
[[nodiscard]] double attention_tile_efficiency(double query_len, double key_len, bool causal);

/// Time of `shape`'s attention relative to the same FLOPs at the reference shape the GPU files'
/// attention_efficiency stands for (one causal call over 8,192 tokens). With `cp_ring_steps` > 1 the
/// pass is cp calls: for a causal model, with Megatron's load-balanced ring (each rank holds chunks
/// i and 2cp−1−i), one causal call over the local s/cp tokens and cp−1 unmasked calls of the local
/// queries against half of a peer's keys; without the mask, cp calls of s/cp × s/cp.
[[nodiscard]] double attention_shape_time_factor(const AttentionShape& shape);

}  // namespace moesim::compute
