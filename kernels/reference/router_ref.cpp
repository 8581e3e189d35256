#include "kernels/reference/router_ref.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace moesim::kernels {
namespace {

// The order the GPU kernel's warp arg-max produces: larger logit first, then lower index.
bool before(float a, int ia, float b, int ib) { return a > b || (a == b && ia < ib); }

}  // namespace

void router_reference_row(const float* logits, int experts, int k, RouterScoring scoring, std::int32_t* indices,
                          float* probabilities) {
  std::vector<char> taken(static_cast<std::size_t>(experts), 0);
  for (int r = 0; r < k; ++r) {
    int best = -1;
    for (int e = 0; e < experts; ++e) {
      if (taken[static_cast<std::size_t>(e)]) continue;
      if (best < 0 || before(logits[e], e, logits[best], best)) best = e;
    }
    taken[static_cast<std::size_t>(best)] = 1;
    indices[r] = best;
  }
  if (scoring == RouterScoring::kSoftmax) {
    const double max = logits[indices[0]];
    double sum = 0;
    for (int e = 0; e < experts; ++e) sum += std::exp(static_cast<double>(logits[e]) - max);
    for (int r = 0; r < k; ++r) probabilities[r] = static_cast<float>(std::exp(logits[indices[r]] - max) / sum);
  } else {
    double sum = 0;
    std::vector<double> s(static_cast<std::size_t>(k));
    for (int r = 0; r < k; ++r) {
      s[static_cast<std::size_t>(r)] = 1.0 / (1.0 + std::exp(-static_cast<double>(logits[indices[r]])));
      sum += s[static_cast<std::size_t>(r)];
    }
    for (int r = 0; r < k; ++r) probabilities[r] = static_cast<float>(s[static_cast<std::size_t>(r)] / sum);
  }
}

std::vector<std::int32_t> topk_by_full_sort(const float* logits, int experts, int k) {
  std::vector<std::int32_t> order(static_cast<std::size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) { return before(logits[a], a, logits[b], b); });
  order.resize(static_cast<std::size_t>(k));
  return order;
}

}  // namespace moesim::kernels
