#pragma once
// CPU reference of MoE token permutation: the routing map (expert-sorted order of the token copies)
// and the gather / weighted scatter-sum the GPU kernels perform. Rows are BF16 bit patterns.
#include <cstdint>
#include <vector>

namespace moesim::kernels {

struct RoutingMap {
  int tokens = 0;
  int topk = 0;
  int experts = 0;
  /// [tokens * topk]: the source token of each permuted row; rows are grouped by expert (expert 0's
  /// first), tokens in ascending order within an expert: Megatron-Core's permute order.
  std::vector<std::int32_t> permuted_token;
  /// [tokens * topk], row-major (token, slot): the permuted row that holds that copy.
  std::vector<std::int32_t> permuted_row;
  /// [experts]: rows per expert, the grouped GEMM's ragged loads.
  std::vector<std::int32_t> tokens_per_expert;
};

/// Builds the map from the router's choice `expert_of` [tokens * topk] by a stable counting sort.
/// Throws std::invalid_argument on an expert index outside [0, experts).
[[nodiscard]] RoutingMap build_routing_map(const std::vector<std::int32_t>& expert_of, int tokens, int topk, int experts);

/// out[r] = in[permuted_token[r]] for every permuted row r; `in` is [tokens x hidden], `out`
/// [tokens*topk x hidden].
void permute_reference(const std::uint16_t* in, int hidden, const RoutingMap& map, std::uint16_t* out);

/// One output row of unpermute, before rounding to BF16: sum over the token's copies of
/// prob[token*topk + slot] * permuted[permuted_row[token*topk + slot]], accumulated in double.
void unpermute_reference_row(const std::uint16_t* permuted, int hidden, const RoutingMap& map, const float* probs,
                             int token, double* out_row);

}  // namespace moesim::kernels
