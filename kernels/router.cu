#include "kernels/router.hpp"

#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/launch_config.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 256;  // 8 tokens in flight per block
constexpr unsigned kFull = 0xffffffffu;

// Which expert a lane's slot s holds. The float4 layout makes each load instruction of the warp
// read 512 contiguous bytes; the scalar one (experts not a multiple of 4) reads 128.
template <bool kVec4>
__device__ __forceinline__ int expert_of(int lane, int s) {
  if constexpr (kVec4) {
    return ((s >> 2) * 32 + lane) * 4 + (s & 3);
  } else {
    return s * 32 + lane;
  }
}

// A float's bits mapped so that unsigned order is float order (for every non-NaN value), which lets
// the warp reduce with one redux.sync instead of five shuffle-and-compare steps. Padding slots hold
// the NaN 0xffffffff, whose key is 0: below every real logit.
__device__ __forceinline__ unsigned order_key(float f) {
  unsigned u = __float_as_uint(f);
  if (u == 0x80000000u) u = 0;  // -0 ties with +0, as it compares in the reference
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_value(unsigned k) { return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k); }

template <int VPL, bool kVec4>
__device__ __forceinline__ void load_row(const float* __restrict__ row, int experts, int lane, float (&v)[VPL]) {
  const float pad = __uint_as_float(0xffffffffu);
  if constexpr (kVec4) {
#pragma unroll
    for (int c = 0; c < VPL / 4; ++c) {
      const int e = (c * 32 + lane) * 4;
      // Logits are read once: streaming loads keep them from evicting what the next kernel needs.
      const float4 x = e < experts ? __ldcs(reinterpret_cast<const float4*>(row + e)) : make_float4(pad, pad, pad, pad);
      v[4 * c] = x.x;
      v[4 * c + 1] = x.y;
      v[4 * c + 2] = x.z;
      v[4 * c + 3] = x.w;
    }
  } else {
#pragma unroll
    for (int s = 0; s < VPL; ++s) {
      const int e = s * 32 + lane;
      v[s] = e < experts ? __ldcs(row + e) : pad;
    }
  }
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  return x;
}

// Top-k of one token held VPL values per lane. Order: larger logit first, then lower expert index
// (the reference's). Instead of k rounds over all 32 x VPL slots, the k-th largest of the 32 lane
// maxima is a threshold that every top-k logit reaches (k lane maxima are at least as large as
// anything below it), so only the few logits at or above it (about k + 1 for random logits) are
// compacted to one per lane and ranked with two redux.sync per round. When more than 32 reach it
// (ties), the k rounds run over every slot instead.
template <int VPL, bool kVec4, bool kSigmoid>
__device__ __forceinline__ void route_token(const float (&v)[VPL], int experts, int k, int lane, unsigned* s_key, int* s_idx,
                                            std::int32_t* __restrict__ out_idx, float* __restrict__ out_prob) {
  unsigned key[VPL];
  unsigned lane_max = 0;
#pragma unroll
  for (int s = 0; s < VPL; ++s) {
    key[s] = order_key(v[s]);
    lane_max = max(lane_max, key[s]);
  }
  unsigned m = lane_max, top = 0, threshold = 0;
  for (int r = 0; r < k; ++r) {
    threshold = __reduce_max_sync(kFull, m);
    if (r == 0) top = threshold;
    const unsigned holder = __reduce_min_sync(kFull, m == threshold ? static_cast<unsigned>(lane) : 32u);
    if (static_cast<unsigned>(lane) == holder) m = 0;  // one lane per round: ties among maxima count twice
  }
  const unsigned floor_key = threshold > 0 ? threshold : 1u;  // fewer than k lanes hold logits: take them all
  unsigned count = 0;
#pragma unroll
  for (int s = 0; s < VPL; ++s) count += key[s] >= floor_key ? 1u : 0u;
  const unsigned total = __reduce_add_sync(kFull, count);

  unsigned win_key = 0;  // lane r ends with round r's winner
  int win_idx = 0;
  if (total <= 32) {
    unsigned offset = count;  // inclusive scan of the lanes' counts
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
      const unsigned y = __shfl_up_sync(kFull, offset, d);
      if (lane >= d) offset += y;
    }
    offset -= count;
#pragma unroll
    for (int s = 0; s < VPL; ++s) {
      if (key[s] >= floor_key) {
        s_key[offset] = key[s];
        s_idx[offset] = expert_of<kVec4>(lane, s);
        ++offset;
      }
    }
    __syncwarp();
    unsigned ck = static_cast<unsigned>(lane) < total ? s_key[lane] : 0u;
    const unsigned ci = static_cast<unsigned>(lane) < total ? static_cast<unsigned>(s_idx[lane]) : 0xffffffffu;
    __syncwarp();  // read before the next token's candidates overwrite them
    for (int r = 0; r < k; ++r) {
      const unsigned best = __reduce_max_sync(kFull, ck);
      const unsigned who = __reduce_min_sync(kFull, ck == best ? ci : 0xffffffffu);
      if (ci == who) ck = 0;
      if (lane == r) {
        win_key = best;
        win_idx = static_cast<int>(who);
      }
    }
  } else {
    unsigned best = 0;
    int best_s = 0;
#pragma unroll
    for (int s = 0; s < VPL; ++s) {
      if (key[s] > best) {  // slots ascend in expert index within a lane: strict > keeps the lowest
        best = key[s];
        best_s = s;
      }
    }
    for (int r = 0; r < k; ++r) {
      const unsigned round_best = __reduce_max_sync(kFull, best);
      const unsigned mine = static_cast<unsigned>(expert_of<kVec4>(lane, best_s));
      const unsigned who = __reduce_min_sync(kFull, best == round_best ? mine : 0xffffffffu);
      if (lane == r) {
        win_key = round_best;
        win_idx = static_cast<int>(who);
      }
      if (best == round_best && mine == who) {
#pragma unroll
        for (int s = 0; s < VPL; ++s) {
          if (s == best_s) key[s] = 0;
        }
        best = 0;
        best_s = 0;
#pragma unroll
        for (int s = 0; s < VPL; ++s) {
          if (key[s] > best) {
            best = key[s];
            best_s = s;
          }
        }
      }
    }
  }

  const float my_val = key_value(win_key);
  float p;
  if constexpr (kSigmoid) {
    const float score = 1.0f / (1.0f + __expf(-my_val));
    p = score / warp_sum(lane < k ? score : 0.0f);
  } else {
    const float row_max = key_value(top);
    float denom = 0;
#pragma unroll
    for (int s = 0; s < VPL; ++s) denom += expert_of<kVec4>(lane, s) < experts ? __expf(v[s] - row_max) : 0.0f;
    p = __expf(my_val - row_max) / warp_sum(denom);
  }
  if (lane < k) {
    out_idx[lane] = win_idx;
    out_prob[lane] = p;
  }
}

// One warp per token, grid-stride over tokens; the next token's logits are loaded before this
// token's selection runs, so the selection overlaps the next row's HBM latency.
template <int VPL, bool kVec4, bool kSigmoid>
__global__ void __launch_bounds__(kThreads) router_topk_kernel(const float* __restrict__ logits, int tokens, int experts, int k,
                                                             std::int32_t* __restrict__ out_idx, float* __restrict__ out_prob) {
  __shared__ unsigned s_key[kThreads / 32][32];
  __shared__ int s_idx[kThreads / 32][32];
  const int lane = threadIdx.x & 31;
  const int warp_in_block = static_cast<int>(threadIdx.x >> 5);
  const int warps = static_cast<int>((gridDim.x * blockDim.x) >> 5);
  int t = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
  if (t >= tokens) return;
  float cur[VPL];
  load_row<VPL, kVec4>(logits + static_cast<std::size_t>(t) * experts, experts, lane, cur);
  for (; t < tokens; t += warps) {
    float nxt[VPL];
    const int tn = t + warps;
    if (tn < tokens) load_row<VPL, kVec4>(logits + static_cast<std::size_t>(tn) * experts, experts, lane, nxt);
    route_token<VPL, kVec4, kSigmoid>(cur, experts, k, lane, s_key[warp_in_block], s_idx[warp_in_block],
                                      out_idx + static_cast<std::size_t>(t) * k, out_prob + static_cast<std::size_t>(t) * k);
#pragma unroll
    for (int s = 0; s < VPL; ++s) cur[s] = nxt[s];
  }
}

template <int VPL, bool kVec4, bool kSigmoid>
void launch(const float* logits, const RouterShape& shape, std::int32_t* idx, float* prob, cudaStream_t stream) {
  auto* kernel = router_topk_kernel<VPL, kVec4, kSigmoid>;
  const std::size_t work_blocks = (static_cast<std::size_t>(shape.tokens) + kThreads / 32 - 1) / (kThreads / 32);
  const unsigned grid = resident_grid(kernel, kThreads, work_blocks);
  kernel<<<grid, kThreads, 0, stream>>>(logits, shape.tokens, shape.experts, shape.topk, idx, prob);
  MOESIM_LAUNCH_CHECK("router_topk_kernel");
}

template <bool kVec4, bool kSigmoid>
void dispatch_vpl(int vpl, const float* logits, const RouterShape& shape, std::int32_t* idx, float* prob, cudaStream_t stream) {
  switch (vpl) {
    case 1: if constexpr (!kVec4) return launch<1, kVec4, kSigmoid>(logits, shape, idx, prob, stream); break;
    case 2: if constexpr (!kVec4) return launch<2, kVec4, kSigmoid>(logits, shape, idx, prob, stream); break;
    case 4: return launch<4, kVec4, kSigmoid>(logits, shape, idx, prob, stream);
    case 8: return launch<8, kVec4, kSigmoid>(logits, shape, idx, prob, stream);
    case 16: return launch<16, kVec4, kSigmoid>(logits, shape, idx, prob, stream);
    default: break;
  }
  throw std::logic_error("router_topk: no kernel for " + std::to_string(vpl) + " values per lane");
}

}  // namespace

void router_topk(const float* logits, const RouterShape& shape, RouterScoring scoring, std::int32_t* indices,
                 float* probabilities, cudaStream_t stream) {
  if (shape.experts < 1 || shape.experts > kRouterMaxExperts || shape.topk < 1 || shape.topk > kRouterMaxTopk ||
      shape.topk > shape.experts || shape.tokens < 0) {
    throw std::invalid_argument("router_topk: unsupported shape (experts " + std::to_string(shape.experts) + ", topk " +
                                std::to_string(shape.topk) + "): experts must be 1.." + std::to_string(kRouterMaxExperts) +
                                " and topk 1..min(16, experts)");
  }
  if (shape.tokens == 0) return;
  // Values per lane: the smallest power of two that covers the experts (float4 layout: 4 or more).
  int vpl = 1;
  while (vpl * 32 < shape.experts) vpl *= 2;
  const bool vec4 = shape.experts % 4 == 0 && reinterpret_cast<std::uintptr_t>(logits) % 16 == 0;
  if (vec4 && vpl < 4) vpl = 4;
  const bool sigmoid = scoring == RouterScoring::kSigmoid;
  if (vec4) {
    sigmoid ? dispatch_vpl<true, true>(vpl, logits, shape, indices, probabilities, stream)
            : dispatch_vpl<true, false>(vpl, logits, shape, indices, probabilities, stream);
  } else {
    sigmoid ? dispatch_vpl<false, true>(vpl, logits, shape, indices, probabilities, stream)
            : dispatch_vpl<false, false>(vpl, logits, shape, indices, probabilities, stream);
  }
}

std::size_t router_bytes(const RouterShape& shape) {
  const auto t = static_cast<std::size_t>(shape.tokens);
  return t * static_cast<std::size_t>(shape.experts) * sizeof(float) +
         t * static_cast<std::size_t>(shape.topk) * (sizeof(std::int32_t) + sizeof(float));
}

}  // namespace moesim::kernels
