#include "compute/attention_efficiency.hpp"

#include <algorithm>

#include "compute/kernel_cost.hpp"

namespace moesim::compute {
namespace {

// Query/key tile of the fused attention kernels (cuDNN and FlashAttention-2/3 use 128-row tiles
// for head dim 128 on Hopper and Blackwell).
constexpr double kTile = 128.0;

// Per-query-tile overhead in key tiles, fitted (one parameter, log least squares) to cuDNN's fused
// attention in the FlashAttention-3 paper (Shah et al. 2024, arXiv 2407.08608, Figure 5 (c) and (d):
// H100 SXM5, BF16, head dim 128, batch × seqlen = 16k, 16 heads): non-causal 497, 574, 617, 609,
// 600, 595 and causal 315, 410, 484, 518, 529, 539 TFLOP/s at 512 … 16k tokens. The fit reproduces
// the twelve figures with a 6 % RMS error (tests/compute/attention_efficiency_test.cpp prints it).
constexpr double kAttentionTileOverhead = 1.15;

// The reference shape: one causal call over 8,192 tokens (the sequence length of the benchmarks
// the GPU files' attention_efficiency comes from).
constexpr double kReferenceTokens = 8192.0;

double call_time(double query_len, double key_len, bool causal) {
  const double useful = query_len * key_len * (causal ? 0.5 : 1.0);
  return useful / attention_tile_efficiency(query_len, key_len, causal);
}

}  // namespace

double attention_tile_efficiency(double query_len, double key_len, bool causal) {
  if (query_len <= 0 || key_len <= 0) return 1.0;
  const double useful = query_len * key_len * (causal ? 0.5 : 1.0);
  // A causal call computes the diagonal tiles whole: half a tile of waste per query row-block.
  const double computed = useful + (causal ? 0.5 * kTile * std::min(query_len, key_len) : 0.0);
  const double overhead = kAttentionTileOverhead * kTile * query_len;
  return useful / (computed + overhead);
}

double attention_shape_time_factor(const AttentionShape& a) {
  if (a.query_len <= 0 || a.key_span <= 0) return 1.0;
  const double reference = attention_tile_efficiency(kReferenceTokens, kReferenceTokens, true);
  const double q = static_cast<double>(a.query_len);
  const double k = static_cast<double>(a.key_span);
  const std::int64_t steps = std::max<std::int64_t>(1, a.cp_ring_steps);
  if (steps == 1) return reference / attention_tile_efficiency(q, k, a.causal);
  const double cp = static_cast<double>(steps);
  const double local = k / cp;  // keys a rank holds: its own share of the sequence
  double useful = 0, time = 0;
  if (a.causal) {
    // Step 0: the rank's two chunks against themselves, causal. Steps 1 … cp−1: the queries against
    // one chunk (half a peer's keys) unmasked; the last rank of the ring runs every step this way.
    useful = q * local * 0.5 + (cp - 1.0) * q * local * 0.5;
    time = call_time(q, local, true) + (cp - 1.0) * call_time(q, 0.5 * local, false);
  } else {
    useful = cp * q * local;
    time = cp * call_time(q, local, false);
  }
  return reference * time / useful;
}

}  // namespace moesim::compute
