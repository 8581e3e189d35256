#include "kernels/attention_softmax.hpp"

#include <cfloat>
#include <cstddef>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>

#include "kernels/cuda_check.hpp"
#include "kernels/launch_config.hpp"

namespace moesim::kernels {
namespace {

constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float hi(unsigned w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ float element(const uint4& v, int e) {
  const unsigned w = e < 2 ? v.x : e < 4 ? v.y : e < 6 ? v.z : v.w;
  return (e & 1) ? hi(w) : lo(w);
}
__device__ __forceinline__ unsigned pack(float a, float b) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const unsigned*>(&h);
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Reduction over the ROW_THREADS threads that share a row: shuffles within a warp, then shared
// memory across the warps of a block-wide row.
template <int ROW_THREADS, class Op>
__device__ __forceinline__ float row_reduce(float x, float* red, Op op) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x = op(x, __shfl_xor_sync(kFull, x, off));
  if constexpr (ROW_THREADS > 32) {
    __syncthreads();  // earlier readers of red are done
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = x;
    __syncthreads();
    x = red[0];
#pragma unroll
    for (int w = 1; w < ROW_THREADS / 32; ++w) x = op(x, red[w]);
  }
  return x;
}

// A row lives in registers as raw BF16 vectors (VPT x 16 bytes per thread, 4 registers each, not
// VPT x 8 floats), so one pass reads it from HBM and one writes it. Vectors wholly past the causal
// boundary are not read at all; they are written as zeros.
template <int VPT, int ROW_THREADS, int BLOCK>
__global__ void __launch_bounds__(BLOCK) softmax_fwd_kernel(uint4* __restrict__ data, std::int64_t rows, int seq, bool causal) {
  constexpr int kRowsPerBlock = BLOCK / ROW_THREADS;
  __shared__ float red[BLOCK / 32];
  const int tid = static_cast<int>(threadIdx.x) % ROW_THREADS;
  const int vpr = seq / 8;
  const int sub = static_cast<int>(threadIdx.x) / ROW_THREADS;
  for (std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock; r0 < rows; r0 += static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock) {
    const std::int64_t r = r0 + sub;
    if (r >= rows) break;  // only warp-wide rows get here (sub > 0): they meet no block barrier
    const int valid = causal ? static_cast<int>(r % seq) + 1 : seq;
    uint4* row = data + r * vpr;
    uint4 raw[VPT];
    float mx = -FLT_MAX;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = tid + v * ROW_THREADS;
      raw[v] = (c < vpr && c * 8 < valid) ? row[c] : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (c * 8 + e < valid) mx = fmaxf(mx, element(raw[v], e));
      }
    }
    mx = row_reduce<ROW_THREADS>(mx, red, MaxOp{});
    float sum = 0;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = tid + v * ROW_THREADS;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (c * 8 + e < valid) sum += __expf(element(raw[v], e) - mx);
      }
    }
    const float inv = 1.0f / row_reduce<ROW_THREADS>(sum, red, SumOp{});
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = tid + v * ROW_THREADS;
      if (c >= vpr) continue;
      float p[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) p[e] = c * 8 + e < valid ? __expf(element(raw[v], e) - mx) * inv : 0.0f;
      row[c] = make_uint4(pack(p[0], p[1]), pack(p[2], p[3]), pack(p[4], p[5]), pack(p[6], p[7]));
    }
  }
}

template <int VPT, int ROW_THREADS, int BLOCK>
__global__ void __launch_bounds__(BLOCK) softmax_bwd_kernel(const uint4* __restrict__ probs, uint4* __restrict__ grad, std::int64_t rows,
                                                            int seq, bool causal) {
  constexpr int kRowsPerBlock = BLOCK / ROW_THREADS;
  __shared__ float red[BLOCK / 32];
  const int tid = static_cast<int>(threadIdx.x) % ROW_THREADS;
  const int vpr = seq / 8;
  const int sub = static_cast<int>(threadIdx.x) / ROW_THREADS;
  for (std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock; r0 < rows; r0 += static_cast<std::int64_t>(gridDim.x) * kRowsPerBlock) {
    const std::int64_t r = r0 + sub;
    if (r >= rows) break;  // only warp-wide rows get here (sub > 0): they meet no block barrier
    const int valid = causal ? static_cast<int>(r % seq) + 1 : seq;
    const uint4* prow = probs + r * vpr;
    uint4* grow = grad + r * vpr;
    uint4 p[VPT], g[VPT];
    float dot = 0;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = tid + v * ROW_THREADS;
      const bool load = c < vpr && c * 8 < valid;
      p[v] = load ? __ldcs(prow + c) : make_uint4(0, 0, 0, 0);
      g[v] = load ? grow[c] : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int e = 0; e < 8; ++e) dot += element(p[v], e) * element(g[v], e);  // masked: p = 0
    }
    dot = row_reduce<ROW_THREADS>(dot, red, SumOp{});
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = tid + v * ROW_THREADS;
      if (c >= vpr) continue;
      float d[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) d[e] = element(p[v], e) * (element(g[v], e) - dot);
      grow[c] = make_uint4(pack(d[0], d[1]), pack(d[2], d[3]), pack(d[4], d[5]), pack(d[6], d[7]));
    }
  }
}

// Any seq (not a multiple of 8, or longer than the register kernels hold): a block per row, scalar
// accesses, the row re-read from global memory (L2) for each pass.
constexpr int kGenericThreads = 256;

__device__ __forceinline__ float bf16_at(const std::uint16_t* p, int i) { return __uint_as_float(static_cast<unsigned>(p[i]) << 16); }
__device__ __forceinline__ std::uint16_t to_bf16(float x) { return __bfloat16_as_ushort(__float2bfloat16_rn(x)); }

__global__ void __launch_bounds__(kGenericThreads) softmax_fwd_generic(std::uint16_t* data, std::int64_t rows, int seq, bool causal) {
  __shared__ float red[kGenericThreads / 32];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    std::uint16_t* row = data + r * seq;
    const int valid = causal ? static_cast<int>(r % seq) + 1 : seq;
    float mx = -FLT_MAX;
    for (int j = static_cast<int>(threadIdx.x); j < valid; j += kGenericThreads) mx = fmaxf(mx, bf16_at(row, j));
    mx = row_reduce<kGenericThreads>(mx, red, MaxOp{});
    float sum = 0;
    for (int j = static_cast<int>(threadIdx.x); j < valid; j += kGenericThreads) sum += __expf(bf16_at(row, j) - mx);
    const float inv = 1.0f / row_reduce<kGenericThreads>(sum, red, SumOp{});
    __syncthreads();  // every thread has read the row before any overwrites it
    for (int j = static_cast<int>(threadIdx.x); j < seq; j += kGenericThreads) {
      row[j] = to_bf16(j < valid ? __expf(bf16_at(row, j) - mx) * inv : 0.0f);
    }
  }
}

__global__ void __launch_bounds__(kGenericThreads) softmax_bwd_generic(const std::uint16_t* probs, std::uint16_t* grad, std::int64_t rows,
                                                                       int seq, bool causal) {
  __shared__ float red[kGenericThreads / 32];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::uint16_t* prow = probs + r * seq;
    std::uint16_t* grow = grad + r * seq;
    const int valid = causal ? static_cast<int>(r % seq) + 1 : seq;
    float dot = 0;
    for (int j = static_cast<int>(threadIdx.x); j < valid; j += kGenericThreads) dot += bf16_at(prow, j) * bf16_at(grow, j);
    dot = row_reduce<kGenericThreads>(dot, red, SumOp{});
    __syncthreads();
    for (int j = static_cast<int>(threadIdx.x); j < seq; j += kGenericThreads) {
      grow[j] = to_bf16(j < valid ? bf16_at(prow, j) * (bf16_at(grow, j) - dot) : 0.0f);
    }
  }
}

template <int VPT, int ROW_THREADS, int BLOCK>
void launch_fwd(std::uint16_t* scores, std::int64_t rows, int seq, bool causal, cudaStream_t stream) {
  auto* kernel = softmax_fwd_kernel<VPT, ROW_THREADS, BLOCK>;
  const auto work = static_cast<std::size_t>((rows + BLOCK / ROW_THREADS - 1) / (BLOCK / ROW_THREADS));
  kernel<<<resident_grid(kernel, BLOCK, work), BLOCK, 0, stream>>>(reinterpret_cast<uint4*>(scores), rows, seq, causal);
  MOESIM_LAUNCH_CHECK("softmax_fwd_kernel");
}

template <int VPT, int ROW_THREADS, int BLOCK>
void launch_bwd(const std::uint16_t* probs, std::uint16_t* grad, std::int64_t rows, int seq, bool causal, cudaStream_t stream) {
  auto* kernel = softmax_bwd_kernel<VPT, ROW_THREADS, BLOCK>;
  const auto work = static_cast<std::size_t>((rows + BLOCK / ROW_THREADS - 1) / (BLOCK / ROW_THREADS));
  kernel<<<resident_grid(kernel, BLOCK, work), BLOCK, 0, stream>>>(reinterpret_cast<const uint4*>(probs), reinterpret_cast<uint4*>(grad),
                                                                    rows, seq, causal);
  MOESIM_LAUNCH_CHECK("softmax_bwd_kernel");
}

struct Fwd {
  std::uint16_t* s;
  std::int64_t rows;
  int seq;
  bool causal;
  cudaStream_t stream;
  template <int V, int R, int B>
  void operator()() const { launch_fwd<V, R, B>(s, rows, seq, causal, stream); }
};

struct Bwd {
  const std::uint16_t* p;
  std::uint16_t* g;
  std::int64_t rows;
  int seq;
  bool causal;
  cudaStream_t stream;
  template <int V, int R, int B>
  void operator()() const { launch_bwd<V, R, B>(p, g, rows, seq, causal, stream); }
};

// Launches the register-resident configuration for rows of seq / 8 vectors: warp-wide rows up to
// 2048 columns (four rows per block), block-wide rows up to 16384; false when none fits.
template <class F>
bool with_config(int seq, const void* a, const void* b, F&& f) {
  if (seq % 8 != 0 || ((reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b)) % 16) != 0) return false;
  const int vpr = seq / 8;
  if (vpr <= 32) {
    f.template operator()<1, 32, 128>();
    return true;
  }
  if (vpr <= 64) {
    f.template operator()<2, 32, 128>();
    return true;
  }
  if (vpr <= 128) {
    f.template operator()<4, 32, 128>();
    return true;
  }
  if (vpr <= 256) {
    f.template operator()<8, 32, 128>();
    return true;
  }
  if (vpr <= 512) {
    f.template operator()<4, 128, 128>();
    return true;
  }
  if (vpr <= 1024) {
    f.template operator()<8, 128, 128>();
    return true;
  }
  if (vpr <= 2048) {
    f.template operator()<8, 256, 256>();
    return true;
  }
  return false;
}

}  // namespace

void softmax_forward(std::uint16_t* scores, std::int64_t rows, int seq, bool causal, cudaStream_t stream) {
  if (seq <= 0) throw std::invalid_argument("softmax_forward: seq must be positive");
  if (rows <= 0) return;
  if (with_config(seq, scores, scores, Fwd{scores, rows, seq, causal, stream})) return;
  const unsigned grid = resident_grid(softmax_fwd_generic, kGenericThreads, static_cast<std::size_t>(rows));
  softmax_fwd_generic<<<grid, kGenericThreads, 0, stream>>>(scores, rows, seq, causal);
  MOESIM_LAUNCH_CHECK("softmax_fwd_generic");
}

void softmax_backward(const std::uint16_t* probs, std::uint16_t* grad, std::int64_t rows, int seq, bool causal, cudaStream_t stream) {
  if (seq <= 0) throw std::invalid_argument("softmax_backward: seq must be positive");
  if (rows <= 0) return;
  if (with_config(seq, probs, grad, Bwd{probs, grad, rows, seq, causal, stream})) return;
  const unsigned grid = resident_grid(softmax_bwd_generic, kGenericThreads, static_cast<std::size_t>(rows));
  softmax_bwd_generic<<<grid, kGenericThreads, 0, stream>>>(probs, grad, rows, seq, causal);
  MOESIM_LAUNCH_CHECK("softmax_bwd_generic");
}

}  // namespace moesim::kernels
