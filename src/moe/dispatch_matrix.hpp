#pragma once
// Bytes each EP rank sends to each other EP rank in one MoE layer's dispatch and combine, by
// dispatcher: the per-rank-pair view of dispatch_traffic's rows per token. Ranks are the EP group's
// members in order, `ep_per_domain` consecutive ones per NVLink domain (Megatron's rank order places
// EP peers contiguously).
//
// - alltoall (Megatron): one row per (token, expert) copy, straight from the source rank to the
//   rank that holds the expert; rank d receives its load share of every rank's copies.
// - deepep / hybridep: a token crosses the network once per remote NVLink domain it reaches, to the
//   rank there with the sender's local index (the RDMA "rail" peer), which forwards it over NVLink
//   to each peer of its domain holding one of the token's experts; inside the sender's own domain a
//   token goes once to each peer it reaches. A rank's NVLink sends therefore carry its own tokens and
//   the ones it forwards for every remote domain.
// - allgather: every rank gathers every rank's tokens (the matrix of an all-gather).
// The combine returns the same rows in the opposite direction (matrix transposed) in 16-bit.
// The diagonal holds what stays on the rank (copies for its own experts): it crosses no link.
#include <cstdint>
#include <span>
#include <vector>

#include "moe/dispatch_traffic.hpp"

namespace moesim::moe {

struct DispatchMatrix {
  std::int64_t ranks = 0;
  std::vector<double> dispatch_bytes;  ///< row-major [source][destination]
  std::vector<double> combine_bytes;   ///< row-major [source][destination]
  [[nodiscard]] double dispatch(std::int64_t from, std::int64_t to) const {
    return dispatch_bytes[static_cast<std::size_t>(from * ranks + to)];
  }
  [[nodiscard]] double combine(std::int64_t from, std::int64_t to) const {
    return combine_bytes[static_cast<std::size_t>(from * ranks + to)];
  }
};

/// One layer's matrices when every EP rank routes `tokens_per_rank` tokens of `hidden` elements.
/// `rank_load_share`: each EP rank's share of the routed copies (sums to 1; empty = balanced, 1/ep);
/// the deduplicated rows scale with the share of the destination rank (or domain) relative to the
/// balanced one. Dispatch elements cost `dispatch_element_bytes`, combine elements 2 bytes.
[[nodiscard]] DispatchMatrix dispatch_matrix(const DispatchShape& shape, double tokens_per_rank, std::int64_t hidden,
                                             double dispatch_element_bytes,
                                             std::span<const double> rank_load_share = {});

}  // namespace moesim::moe
