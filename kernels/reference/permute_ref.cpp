#include "kernels/reference/permute_ref.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/numeric.hpp"

namespace moesim::kernels {

RoutingMap build_routing_map(const std::vector<std::int32_t>& expert_of, int tokens, int topk, int experts) {
  const auto copies = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(topk);
  if (expert_of.size() != copies) throw std::invalid_argument("build_routing_map: expert_of must hold tokens * topk entries");
  RoutingMap map;
  map.tokens = tokens;
  map.topk = topk;
  map.experts = experts;
  map.tokens_per_expert.assign(static_cast<std::size_t>(experts), 0);
  for (const std::int32_t e : expert_of) {
    if (e < 0 || e >= experts) throw std::invalid_argument("build_routing_map: expert index " + std::to_string(e) + " outside [0, " + std::to_string(experts) + ")");
    ++map.tokens_per_expert[static_cast<std::size_t>(e)];
  }
  std::vector<std::int32_t> next(static_cast<std::size_t>(experts), 0);
  for (int e = 1; e < experts; ++e) next[static_cast<std::size_t>(e)] = next[static_cast<std::size_t>(e - 1)] + map.tokens_per_expert[static_cast<std::size_t>(e - 1)];
  map.permuted_token.assign(copies, -1);
  map.permuted_row.assign(copies, -1);
  for (int t = 0; t < tokens; ++t) {
    for (int s = 0; s < topk; ++s) {
      const std::size_t copy = static_cast<std::size_t>(t) * static_cast<std::size_t>(topk) + static_cast<std::size_t>(s);
      const std::int32_t row = next[static_cast<std::size_t>(expert_of[copy])]++;
      map.permuted_token[static_cast<std::size_t>(row)] = t;
      map.permuted_row[copy] = row;
    }
  }
  return map;
}

void permute_reference(const std::uint16_t* in, int hidden, const RoutingMap& map, std::uint16_t* out) {
  const auto h = static_cast<std::size_t>(hidden);
  for (std::size_t r = 0; r < map.permuted_token.size(); ++r) {
    std::memcpy(out + r * h, in + static_cast<std::size_t>(map.permuted_token[r]) * h, h * sizeof(std::uint16_t));
  }
}

void unpermute_reference_row(const std::uint16_t* permuted, int hidden, const RoutingMap& map, const float* probs,
                             int token, double* out_row) {
  const auto h = static_cast<std::size_t>(hidden);
  for (std::size_t c = 0; c < h; ++c) out_row[c] = 0;
  for (int s = 0; s < map.topk; ++s) {
    const std::size_t copy = static_cast<std::size_t>(token) * static_cast<std::size_t>(map.topk) + static_cast<std::size_t>(s);
    const std::int32_t row = map.permuted_row[copy];
    if (row < 0) continue;  // a dropped copy (capacity) contributes nothing
    const std::uint16_t* src = permuted + static_cast<std::size_t>(row) * h;
    for (std::size_t c = 0; c < h; ++c) out_row[c] += static_cast<double>(probs[copy]) * bf16_to_float(src[c]);
  }
}

}  // namespace moesim::kernels
