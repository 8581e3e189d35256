#include "kernels/permute.hpp"

#include <cuda_bf16.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/launch_config.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 128;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread before the first store

// One block per permuted row, grid-stride over rows. A row is 8-14 KiB at LLM hidden sizes, so one
// block moves it with fully coalesced 16-byte accesses; the next row's source index is fetched
// before this row's copy so that its latency is hidden.
__global__ void __launch_bounds__(kThreads) permute_kernel(const uint4* __restrict__ in, const std::int32_t* __restrict__ src,
                                                         int rows, int vpr, uint4* __restrict__ out) {
  int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  int s = __ldg(src + r);
  for (; r < rows; r += static_cast<int>(gridDim.x)) {
    const int rn = r + static_cast<int>(gridDim.x);
    const int s_next = rn < rows ? __ldg(src + rn) : 0;
    const uint4* srow = in + static_cast<std::size_t>(s) * vpr;
    uint4* drow = out + static_cast<std::size_t>(r) * vpr;
    for (int base = static_cast<int>(threadIdx.x); base < vpr; base += kThreads * kUnroll) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int c = base + u * kThreads;
        if (c < vpr) v[u] = __ldcs(srow + c);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int c = base + u * kThreads;
        if (c < vpr) drow[c] = v[u];
      }
    }
    s = s_next;
  }
}

__device__ __forceinline__ void accumulate(float (&acc)[8], const uint4& v, float p) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    acc[2 * i] += p * __uint_as_float(w[i] << 16);           // element 2i: the low half
    acc[2 * i + 1] += p * __uint_as_float(w[i] & 0xffff0000u);
  }
}

__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x (lo) in the low half
  return *reinterpret_cast<const unsigned*>(&h);
}

// One block per token, grid-stride over tokens. Each thread owns 16-byte columns of the output and
// issues the loads of up to kUnroll of the token's k copies before accumulating any, so a thread
// keeps 64 bytes in flight.
__global__ void __launch_bounds__(kThreads) unpermute_kernel(const uint4* __restrict__ permuted, const std::int32_t* __restrict__ prow,
                                                           const float* __restrict__ probs, int tokens, int topk, int vpr,
                                                           uint4* __restrict__ out) {
  __shared__ int s_row[kPermuteMaxTopk];
  __shared__ float s_prob[kPermuteMaxTopk];
  for (int t = static_cast<int>(blockIdx.x); t < tokens; t += static_cast<int>(gridDim.x)) {
    __syncthreads();  // the previous token's readers of s_row are done
    if (static_cast<int>(threadIdx.x) < topk) {
      const std::size_t copy = static_cast<std::size_t>(t) * topk + threadIdx.x;
      const int row = __ldg(prow + copy);
      s_row[threadIdx.x] = row;
      s_prob[threadIdx.x] = row >= 0 ? __ldg(probs + copy) : 0.0f;
    }
    __syncthreads();
    for (int c = static_cast<int>(threadIdx.x); c < vpr; c += kThreads) {
      float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      for (int j0 = 0; j0 < topk; j0 += kUnroll) {
        uint4 v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int j = j0 + u;
          const int row = j < topk ? s_row[j] : -1;
          v[u] = row >= 0 ? __ldcs(permuted + static_cast<std::size_t>(row) * vpr + c) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (j0 + u < topk) accumulate(acc, v[u], s_prob[j0 + u]);
        }
      }
      out[static_cast<std::size_t>(t) * vpr + c] =
          make_uint4(pack_bf16x2(acc[0], acc[1]), pack_bf16x2(acc[2], acc[3]), pack_bf16x2(acc[4], acc[5]), pack_bf16x2(acc[6], acc[7]));
    }
  }
}

void require_rows(int hidden, const void* a, const void* b, const char* what) {
  if (hidden <= 0 || hidden % 8 != 0) {
    throw std::invalid_argument(std::string(what) + ": hidden " + std::to_string(hidden) + " must be a positive multiple of 8 (16-byte rows)");
  }
  if ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) % 16 != 0) {
    throw std::invalid_argument(std::string(what) + ": token buffers must be 16-byte aligned");
  }
}

}  // namespace

void permute_tokens(const std::uint16_t* in, const std::int32_t* permuted_token, int rows, int hidden, std::uint16_t* out,
                    cudaStream_t stream) {
  require_rows(hidden, in, out, "permute_tokens");
  if (rows <= 0) return;
  const unsigned grid = resident_grid(permute_kernel, kThreads, static_cast<std::size_t>(rows));
  permute_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(in), permuted_token, rows, hidden / 8,
                                                reinterpret_cast<uint4*>(out));
  MOESIM_LAUNCH_CHECK("permute_kernel");
}

void unpermute_tokens(const std::uint16_t* permuted, const std::int32_t* permuted_row, const float* probs, int tokens,
                      int topk, int hidden, std::uint16_t* out, cudaStream_t stream) {
  require_rows(hidden, permuted, out, "unpermute_tokens");
  if (topk < 1 || topk > kPermuteMaxTopk) {
    throw std::invalid_argument("unpermute_tokens: topk " + std::to_string(topk) + " outside 1.." + std::to_string(kPermuteMaxTopk));
  }
  if (tokens <= 0) return;
  const unsigned grid = resident_grid(unpermute_kernel, kThreads, static_cast<std::size_t>(tokens));
  unpermute_kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(permuted), permuted_row, probs, tokens, topk,
                                                  hidden / 8, reinterpret_cast<uint4*>(out));
  MOESIM_LAUNCH_CHECK("unpermute_kernel");
}

std::size_t permute_bytes(int tokens, int topk, int hidden) {
  const std::size_t rows = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(topk);
  return 2 * rows * static_cast<std::size_t>(hidden) * 2 + rows * sizeof(std::int32_t);
}

std::size_t unpermute_bytes(int tokens, int topk, int hidden) {
  const std::size_t rows = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(topk);
  const std::size_t row_bytes = static_cast<std::size_t>(hidden) * 2;
  return rows * row_bytes + static_cast<std::size_t>(tokens) * row_bytes + rows * (sizeof(std::int32_t) + sizeof(float));
}

}  // namespace moesim::kernels
