#include "kernels/elementwise.hpp"

#include <cuda_bf16.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/launch_config.hpp"

namespace moesim::kernels {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ unsigned pack2(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x (lo) in the low half
  return *reinterpret_cast<const unsigned*>(&h);
}

// W BF16 values moved by one access: 8 (a 16-byte vector) or 1 (the scalar path, for widths or
// pointers that do not allow vectors). Element 2i of a vector is the low half of word i.
template <int W>
struct Bf16Pack;

template <>
struct Bf16Pack<8> {
  using Raw = uint4;
  __device__ static float get(const uint4& v, int e) {
    const unsigned w = e < 2 ? v.x : e < 4 ? v.y : e < 6 ? v.z : v.w;
    return (e & 1) ? __uint_as_float(w & 0xffff0000u) : __uint_as_float(w << 16);
  }
  __device__ static uint4 put(const float (&f)[8]) {
    return make_uint4(pack2(f[0], f[1]), pack2(f[2], f[3]), pack2(f[4], f[5]), pack2(f[6], f[7]));
  }
};

template <>
struct Bf16Pack<1> {
  using Raw = std::uint16_t;
  __device__ static float get(std::uint16_t v, int) { return __uint_as_float(static_cast<unsigned>(v) << 16); }
  __device__ static std::uint16_t put(const float (&f)[1]) { return __bfloat16_as_ushort(__float2bfloat16_rn(f[0])); }
};

bool vectorizable(std::int64_t width, const void* a, const void* b, const void* c = nullptr) {
  const auto bits =
      reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b) | reinterpret_cast<std::uintptr_t>(c);
  return width % 8 == 0 && bits % 16 == 0;
}

// ---- SwiGLU ---------------------------------------------------------------------------------------

// (row, column) of this thread's element in a grid-stride walk over a [rows x cols] matrix. The
// walk advances by the constant stride's row and column parts, so a thread divides once, not at
// every element (a 64-bit division is dozens of instructions, and these kernels move 16 bytes
// per element).
struct GridWalk {
  std::int64_t r, c, cols, dr, dc;
  __device__ explicit GridWalk(std::int64_t columns) : cols(columns) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
    r = i / cols;
    c = i % cols;
    dr = stride / cols;
    dc = stride % cols;
  }
  __device__ void next() {
    r += dr;
    c += dc;
    if (c >= cols) {
      c -= cols;
      ++r;
    }
  }
};

__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }

// vpr: accesses per output row (ffn / W); an input row is 2 * vpr, the gate half first.
template <int W>
__global__ void __launch_bounds__(kThreads) swiglu_fwd_kernel(const std::uint16_t* __restrict__ in, std::int64_t rows,
                                                              std::int64_t vpr, std::uint16_t* __restrict__ out) {
  using P = Bf16Pack<W>;
  const auto* src = reinterpret_cast<const typename P::Raw*>(in);
  auto* dst = reinterpret_cast<typename P::Raw*>(out);
  for (GridWalk w(vpr); w.r < rows; w.next()) {
    const auto* row = src + w.r * 2 * vpr;
    const typename P::Raw a = __ldcs(row + w.c), b = __ldcs(row + vpr + w.c);  // read once: stream past L2
    float y[W];
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const float x = P::get(a, e);
      y[e] = x * sigmoid(x) * P::get(b, e);
    }
    dst[w.r * vpr + w.c] = P::put(y);
  }
}

template <int W>
__global__ void __launch_bounds__(kThreads) swiglu_bwd_kernel(const std::uint16_t* __restrict__ in,
                                                              const std::uint16_t* __restrict__ d_out,
                                                              std::int64_t rows, std::int64_t vpr,
                                                              std::uint16_t* __restrict__ d_in) {
  using P = Bf16Pack<W>;
  const auto* src = reinterpret_cast<const typename P::Raw*>(in);
  const auto* dy = reinterpret_cast<const typename P::Raw*>(d_out);
  auto* dst = reinterpret_cast<typename P::Raw*>(d_in);
  for (GridWalk w(vpr); w.r < rows; w.next()) {
    const std::int64_t base = w.r * 2 * vpr + w.c;
    const typename P::Raw a = __ldcs(src + base), b = __ldcs(src + base + vpr), g = __ldcs(dy + w.r * vpr + w.c);
    float da[W], db[W];
#pragma unroll
    for (int e = 0; e < W; ++e) {
      const float x = P::get(a, e), up = P::get(b, e), grad = P::get(g, e);
      const float s = sigmoid(x);
      da[e] = grad * up * s * (1.0f + x * (1.0f - s));  // d silu / dx = s + x s (1 - s)
      db[e] = grad * x * s;
    }
    dst[base] = P::put(da);
    dst[base + vpr] = P::put(db);
  }
}

template <int W>
void launch_swiglu(const std::uint16_t* in, const std::uint16_t* d_out, std::int64_t rows, std::int64_t ffn,
                   std::uint16_t* out, cudaStream_t stream) {
  const std::int64_t vpr = ffn / W;
  const std::size_t work = static_cast<std::size_t>(rows) * static_cast<std::size_t>(vpr);
  const std::size_t work_blocks = (work + kThreads - 1) / kThreads;
  if (d_out == nullptr) {
    const unsigned grid = resident_grid(swiglu_fwd_kernel<W>, kThreads, work_blocks);
    swiglu_fwd_kernel<W><<<grid, kThreads, 0, stream>>>(in, rows, vpr, out);
    MOESIM_LAUNCH_CHECK("swiglu_fwd_kernel");
  } else {
    const unsigned grid = resident_grid(swiglu_bwd_kernel<W>, kThreads, work_blocks);
    swiglu_bwd_kernel<W><<<grid, kThreads, 0, stream>>>(in, d_out, rows, vpr, out);
    MOESIM_LAUNCH_CHECK("swiglu_bwd_kernel");
  }
}

void require_shape(std::int64_t rows, std::int64_t width, const char* what, const char* width_name) {
  if (rows < 0 || width < 0) {
    throw std::invalid_argument(std::string(what) + ": rows " + std::to_string(rows) + " and " + width_name + " " +
                                std::to_string(width) + " must not be negative");
  }
}

// ---- RMSNorm --------------------------------------------------------------------------------------

// Sum over the block: shuffles within each warp, then the warps' sums through shared memory.
template <int THREADS>
__device__ __forceinline__ float block_sum(float x, float* red) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(kFull, x, off);
  __syncthreads();  // the previous row's readers of red are done
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = x;
  __syncthreads();
  x = red[0];
#pragma unroll
  for (int w = 1; w < THREADS / 32; ++w) x += red[w];
  return x;
}

// One block per row, grid-stride over rows. A thread holds VPT accesses of W values of the row (and
// of gamma, loaded once per block) in registers, so x is read from HBM once although it is needed
// twice (the sum of squares, then the scaling).
template <int W_, int VPT_, int THREADS_>
struct RowConfig {
  static constexpr int W = W_, VPT = VPT_, THREADS = THREADS_;
};

template <int W, int VPT, int THREADS>
__global__ void __launch_bounds__(THREADS) rmsnorm_fwd_kernel(const std::uint16_t* __restrict__ x,
                                                              const std::uint16_t* __restrict__ gamma,
                                                              std::int64_t rows, int hidden, float eps,
                                                              std::uint16_t* __restrict__ out,
                                                              float* __restrict__ rstd) {
  using P = Bf16Pack<W>;
  using Raw = typename P::Raw;
  __shared__ float red[THREADS / 32];
  const int vpr = hidden / W;
  Raw gv[VPT];
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int c = static_cast<int>(threadIdx.x) + v * THREADS;
    gv[v] = c < vpr ? __ldg(reinterpret_cast<const Raw*>(gamma) + c) : Raw{};
  }
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const Raw* row = reinterpret_cast<const Raw*>(x) + r * vpr;
    Raw raw[VPT];
    float ss = 0;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = static_cast<int>(threadIdx.x) + v * THREADS;
      raw[v] = c < vpr ? __ldcs(row + c) : Raw{};
#pragma unroll
      for (int e = 0; e < W; ++e) ss += P::get(raw[v], e) * P::get(raw[v], e);
    }
    const float rs = rsqrtf(block_sum<THREADS>(ss, red) / static_cast<float>(hidden) + eps);
    if (threadIdx.x == 0) rstd[r] = rs;
    Raw* orow = reinterpret_cast<Raw*>(out) + r * vpr;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = static_cast<int>(threadIdx.x) + v * THREADS;
      if (c >= vpr) continue;
      float y[W];
#pragma unroll
      for (int e = 0; e < W; ++e) y[e] = P::get(raw[v], e) * rs * P::get(gv[v], e);
      orow[c] = P::put(y);
    }
  }
}

// d_x = rstd (gamma dy - x rstd^2 sum(gamma dy x) / hidden). A thread owns the same columns in
// every row its block visits, so it sums its columns' d_gamma terms in registers across those rows
// and adds them to d_gamma with one atomic each at the end: grid x hidden atomics in all, not
// rows x hidden.
template <int W, int VPT, int THREADS>
__global__ void __launch_bounds__(THREADS) rmsnorm_bwd_kernel(const std::uint16_t* __restrict__ x,
                                                              const std::uint16_t* __restrict__ gamma,
                                                              const float* __restrict__ rstd,
                                                              const std::uint16_t* __restrict__ d_out,
                                                              std::int64_t rows, int hidden,
                                                              std::uint16_t* __restrict__ d_x,
                                                              float* __restrict__ d_gamma) {
  using P = Bf16Pack<W>;
  using Raw = typename P::Raw;
  __shared__ float red[THREADS / 32];
  const int vpr = hidden / W;
  Raw gv[VPT];
  float acc[VPT][W];
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int c = static_cast<int>(threadIdx.x) + v * THREADS;
    gv[v] = c < vpr ? __ldg(reinterpret_cast<const Raw*>(gamma) + c) : Raw{};
#pragma unroll
    for (int e = 0; e < W; ++e) acc[v][e] = 0.0f;
  }
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const Raw* xrow = reinterpret_cast<const Raw*>(x) + r * vpr;
    const Raw* dyrow = reinterpret_cast<const Raw*>(d_out) + r * vpr;
    const float rs = __ldg(rstd + r);
    Raw xr[VPT], dr[VPT];
    float dot = 0;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = static_cast<int>(threadIdx.x) + v * THREADS;
      xr[v] = c < vpr ? __ldcs(xrow + c) : Raw{};
      dr[v] = c < vpr ? __ldcs(dyrow + c) : Raw{};
#pragma unroll
      for (int e = 0; e < W; ++e) {
        const float xf = P::get(xr[v], e), dy = P::get(dr[v], e);
        dot += dy * P::get(gv[v], e) * xf;
        acc[v][e] += dy * xf * rs;
      }
    }
    const float k = rs * rs * block_sum<THREADS>(dot, red) / static_cast<float>(hidden);
    Raw* dxrow = reinterpret_cast<Raw*>(d_x) + r * vpr;
#pragma unroll
    for (int v = 0; v < VPT; ++v) {
      const int c = static_cast<int>(threadIdx.x) + v * THREADS;
      if (c >= vpr) continue;
      float dx[W];
#pragma unroll
      for (int e = 0; e < W; ++e) dx[e] = rs * (P::get(dr[v], e) * P::get(gv[v], e) - P::get(xr[v], e) * k);
      dxrow[c] = P::put(dx);
    }
  }
#pragma unroll
  for (int v = 0; v < VPT; ++v) {
    const int c = static_cast<int>(threadIdx.x) + v * THREADS;
    if (c >= vpr) continue;
#pragma unroll
    for (int e = 0; e < W; ++e) atomicAdd(d_gamma + static_cast<std::int64_t>(c) * W + e, acc[v][e]);
  }
}

// The register layout for a row: the fewest accesses per thread (registers) that cover it without
// leaving most of a block idle. Every hidden <= kRmsNormMaxHidden has one. The scalar layout of wide
// rows (1024 threads, at most 64 registers each) spills a few in the backward: only widths that are
// not a multiple of 8, or unaligned tensors, take it.
template <class F>
void with_row_config(std::int64_t hidden, bool vec, F&& f) {
  if (vec) {
    const std::int64_t vpr = hidden / 8;
    if (vpr <= 128) return f(RowConfig<8, 1, 128>{});
    if (vpr <= 256) return f(RowConfig<8, 1, 256>{});
    if (vpr <= 512) return f(RowConfig<8, 2, 256>{});
    if (vpr <= 1024) return f(RowConfig<8, 4, 256>{});
    return f(RowConfig<8, 4, 512>{});
  }
  if (hidden <= 1024) return f(RowConfig<1, 4, 256>{});
  return f(RowConfig<1, 16, 1024>{});
}

void require_hidden(std::int64_t rows, std::int64_t hidden, const char* what) {
  if (rows < 0 || hidden <= 0 || hidden > kRmsNormMaxHidden) {
    throw std::invalid_argument(std::string(what) + ": hidden " + std::to_string(hidden) + " outside 1.." +
                                std::to_string(kRmsNormMaxHidden) + " or negative rows " + std::to_string(rows));
  }
}

// ---- AdamW ----------------------------------------------------------------------------------------

struct AdamCoeffs {
  float lr, beta1, beta2, eps;
  float decay;             // 1 - lr * weight_decay: decoupled decay scales the weight
  float inv_bc1, inv_bc2;  // 1 / (1 - beta^step), from the host in double
};

__device__ __forceinline__ void adam_element(float& p, float& m, float& v, float g, const AdamCoeffs& k) {
  m = k.beta1 * m + (1.0f - k.beta1) * g;
  v = k.beta2 * v + (1.0f - k.beta2) * g * g;
  p = p * k.decay - k.lr * (m * k.inv_bc1) / (sqrtf(v * k.inv_bc2) + k.eps);
}

// Grid-stride over `vectors` groups of 4 parameters (16-byte FP32, 8-byte BF16 accesses), then the
// parameters from 4 * vectors on one at a time: the whole tensor when its pointers are not aligned
// for vectors, otherwise the last n % 4.
__global__ void __launch_bounds__(kThreads) adam_kernel(float* __restrict__ master, float* __restrict__ m,
                                                        float* __restrict__ v, const float* __restrict__ grad,
                                                        std::uint16_t* __restrict__ weight, std::int64_t n,
                                                        std::int64_t vectors, AdamCoeffs k) {
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < vectors; i += stride) {
    float4 p = reinterpret_cast<const float4*>(master)[i];
    float4 mm = reinterpret_cast<const float4*>(m)[i];
    float4 vv = reinterpret_cast<const float4*>(v)[i];
    const float4 g = __ldcs(reinterpret_cast<const float4*>(grad) + i);
    adam_element(p.x, mm.x, vv.x, g.x, k);
    adam_element(p.y, mm.y, vv.y, g.y, k);
    adam_element(p.z, mm.z, vv.z, g.z, k);
    adam_element(p.w, mm.w, vv.w, g.w, k);
    reinterpret_cast<float4*>(master)[i] = p;
    reinterpret_cast<float4*>(m)[i] = mm;
    reinterpret_cast<float4*>(v)[i] = vv;
    reinterpret_cast<uint2*>(weight)[i] = make_uint2(pack2(p.x, p.y), pack2(p.z, p.w));
  }
  for (std::int64_t i = 4 * vectors + first; i < n; i += stride) {
    float p = master[i], mm = m[i], vv = v[i];
    adam_element(p, mm, vv, grad[i], k);
    master[i] = p;
    m[i] = mm;
    v[i] = vv;
    weight[i] = __bfloat16_as_ushort(__float2bfloat16_rn(p));
  }
}

// ---- dropout ---------------------------------------------------------------------------------------

// Grid-stride over `vectors` groups of 8 elements (16-byte BF16 and 8-byte mask accesses), then the
// elements from 8 * vectors on one at a time: all of them when the pointers are not aligned for
// vectors, otherwise the last n % 8. Byte e of a mask vector (element 8i + e) is byte e % 4 of word
// e / 4. `in` and `out` are not __restrict__: the caller may drop out in place, and each element is
// read by the thread that writes it.
__global__ void __launch_bounds__(kThreads) dropout_fwd_kernel(const std::uint16_t* in, std::int64_t n,
                                                               std::int64_t vectors, float p, float scale,
                                                               std::uint64_t seed, std::uint8_t* __restrict__ mask,
                                                               std::uint16_t* out) {
  using P = Bf16Pack<8>;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < vectors; i += stride) {
    const uint4 x = __ldcs(reinterpret_cast<const uint4*>(in) + i);  // read once: stream past L2
    float y[8];
    unsigned m[2] = {0u, 0u};
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const bool keep = dropout_keep(seed, static_cast<std::uint64_t>(8 * i + e), p);
      y[e] = keep ? P::get(x, e) * scale : 0.0f;  // a select, not x * 0: dropped elements are +0, as the reference's
      m[e / 4] |= static_cast<unsigned>(keep) << (8 * (e % 4));
    }
    reinterpret_cast<uint2*>(mask)[i] = make_uint2(m[0], m[1]);
    reinterpret_cast<uint4*>(out)[i] = P::put(y);
  }
  for (std::int64_t i = 8 * vectors + first; i < n; i += stride) {
    const bool keep = dropout_keep(seed, static_cast<std::uint64_t>(i), p);
    const float y[1] = {keep ? Bf16Pack<1>::get(in[i], 0) * scale : 0.0f};
    mask[i] = keep ? 1 : 0;
    out[i] = Bf16Pack<1>::put(y);
  }
}

// As dropout_fwd_kernel, the mask read instead of drawn; d_in may be d_out.
__global__ void __launch_bounds__(kThreads) dropout_bwd_kernel(const std::uint16_t* d_out,
                                                               const std::uint8_t* __restrict__ mask, std::int64_t n,
                                                               std::int64_t vectors, float scale,
                                                               std::uint16_t* d_in) {
  using P = Bf16Pack<8>;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = first; i < vectors; i += stride) {
    const uint4 g = __ldcs(reinterpret_cast<const uint4*>(d_out) + i);
    const uint2 mv = __ldcs(reinterpret_cast<const uint2*>(mask) + i);
    float y[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const unsigned byte = ((e < 4 ? mv.x : mv.y) >> (8 * (e % 4))) & 0xffu;
      y[e] = byte != 0 ? P::get(g, e) * scale : 0.0f;
    }
    reinterpret_cast<uint4*>(d_in)[i] = P::put(y);
  }
  for (std::int64_t i = 8 * vectors + first; i < n; i += stride) {
    const float y[1] = {mask[i] != 0 ? Bf16Pack<1>::get(d_out[i], 0) * scale : 0.0f};
    d_in[i] = Bf16Pack<1>::put(y);
  }
}

// Groups of 8 when both BF16 tensors are 16-byte aligned and the mask 8-byte aligned (element 8i of
// every tensor then starts a vector), otherwise none; the launch covers the groups and the tail.
struct DropoutLaunch {
  std::int64_t vectors;
  std::size_t work_blocks;
};

DropoutLaunch dropout_launch(std::int64_t n, const void* a, const void* b, const std::uint8_t* mask) {
  const auto bf16 = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(b);
  const bool vec = bf16 % 16 == 0 && reinterpret_cast<std::uintptr_t>(mask) % 8 == 0;
  const std::int64_t vectors = vec ? n / 8 : 0;
  const auto work = static_cast<std::size_t>(vec ? vectors + 1 : n);  // + 1: the tail's thread(s)
  return {vectors, (work + kThreads - 1) / kThreads};
}

void require_dropout(std::int64_t n, float p, const char* what) {
  if (n < 0 || !(p >= 0.0f && p < 1.0f)) {  // written so that a NaN p fails too
    throw std::invalid_argument(std::string(what) + ": n " + std::to_string(n) + " must not be negative and p " +
                                std::to_string(p) + " must lie in [0, 1)");
  }
}

}  // namespace

void swiglu_forward(const std::uint16_t* in, std::int64_t rows, std::int64_t ffn, std::uint16_t* out,
                    cudaStream_t stream) {
  require_shape(rows, ffn, "swiglu_forward", "ffn");
  if (rows == 0 || ffn == 0) return;
  vectorizable(ffn, in, out) ? launch_swiglu<8>(in, nullptr, rows, ffn, out, stream)
                             : launch_swiglu<1>(in, nullptr, rows, ffn, out, stream);
}

void swiglu_backward(const std::uint16_t* in, const std::uint16_t* d_out, std::int64_t rows, std::int64_t ffn,
                     std::uint16_t* d_in, cudaStream_t stream) {
  require_shape(rows, ffn, "swiglu_backward", "ffn");
  if (rows == 0 || ffn == 0) return;
  vectorizable(ffn, in, d_out, d_in) ? launch_swiglu<8>(in, d_out, rows, ffn, d_in, stream)
                                     : launch_swiglu<1>(in, d_out, rows, ffn, d_in, stream);
}

void rmsnorm_forward(const std::uint16_t* x, const std::uint16_t* gamma, std::int64_t rows, std::int64_t hidden,
                     float eps, std::uint16_t* out, float* rstd, cudaStream_t stream) {
  require_hidden(rows, hidden, "rmsnorm_forward");
  if (rows == 0) return;
  with_row_config(hidden, vectorizable(hidden, x, out, gamma), [&](auto config) {
    using C = decltype(config);
    auto* kernel = rmsnorm_fwd_kernel<C::W, C::VPT, C::THREADS>;
    const unsigned grid = resident_grid(kernel, C::THREADS, static_cast<std::size_t>(rows));
    kernel<<<grid, C::THREADS, 0, stream>>>(x, gamma, rows, static_cast<int>(hidden), eps, out, rstd);
    MOESIM_LAUNCH_CHECK("rmsnorm_fwd_kernel");
  });
}

void rmsnorm_backward(const std::uint16_t* x, const std::uint16_t* gamma, const float* rstd,
                      const std::uint16_t* d_out, std::int64_t rows, std::int64_t hidden, std::uint16_t* d_x,
                      float* d_gamma, cudaStream_t stream) {
  require_hidden(rows, hidden, "rmsnorm_backward");
  if (rows == 0) return;
  const bool vec = vectorizable(hidden, x, d_out, d_x) && vectorizable(hidden, gamma, gamma);
  with_row_config(hidden, vec, [&](auto config) {
    using C = decltype(config);
    auto* kernel = rmsnorm_bwd_kernel<C::W, C::VPT, C::THREADS>;
    const unsigned grid = resident_grid(kernel, C::THREADS, static_cast<std::size_t>(rows));
    kernel<<<grid, C::THREADS, 0, stream>>>(x, gamma, rstd, d_out, rows, static_cast<int>(hidden), d_x, d_gamma);
    MOESIM_LAUNCH_CHECK("rmsnorm_bwd_kernel");
  });
}

void adam_update(float* master, float* m, float* v, const float* grad, std::uint16_t* weight, std::int64_t n,
                 const AdamParams& p, cudaStream_t stream) {
  if (p.step < 1 || n < 0) {
    throw std::invalid_argument("adam_update: step " + std::to_string(p.step) + " (counts from 1), n " +
                                std::to_string(n));
  }
  if (n == 0) return;
  const AdamCoeffs k{p.lr,
                     p.beta1,
                     p.beta2,
                     p.eps,
                     static_cast<float>(1.0 - static_cast<double>(p.lr) * p.weight_decay),
                     static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(p.beta1), p.step))),
                     static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(p.beta2), p.step)))};
  const auto f32 = reinterpret_cast<std::uintptr_t>(master) | reinterpret_cast<std::uintptr_t>(m) |
                   reinterpret_cast<std::uintptr_t>(v) | reinterpret_cast<std::uintptr_t>(grad);
  const bool vec = f32 % 16 == 0 && reinterpret_cast<std::uintptr_t>(weight) % 8 == 0;
  const std::int64_t vectors = vec ? n / 4 : 0;
  const auto work = static_cast<std::size_t>(vec ? vectors + 1 : n);  // + 1: the tail's thread(s)
  const unsigned grid = resident_grid(adam_kernel, kThreads, (work + kThreads - 1) / kThreads);
  adam_kernel<<<grid, kThreads, 0, stream>>>(master, m, v, grad, weight, n, vectors, k);
  MOESIM_LAUNCH_CHECK("adam_kernel");
}

void dropout_forward(const std::uint16_t* in, std::int64_t n, float p, std::uint64_t seed, std::uint8_t* mask,
                     std::uint16_t* out, cudaStream_t stream) {
  require_dropout(n, p, "dropout_forward");
  if (n == 0) return;
  const DropoutLaunch l = dropout_launch(n, in, out, mask);
  const unsigned grid = resident_grid(dropout_fwd_kernel, kThreads, l.work_blocks);
  dropout_fwd_kernel<<<grid, kThreads, 0, stream>>>(in, n, l.vectors, p, dropout_scale(p), seed, mask, out);
  MOESIM_LAUNCH_CHECK("dropout_fwd_kernel");
}

void dropout_backward(const std::uint16_t* d_out, const std::uint8_t* mask, std::int64_t n, float p,
                      std::uint16_t* d_in, cudaStream_t stream) {
  require_dropout(n, p, "dropout_backward");
  if (n == 0) return;
  const DropoutLaunch l = dropout_launch(n, d_out, d_in, mask);
  const unsigned grid = resident_grid(dropout_bwd_kernel, kThreads, l.work_blocks);
  dropout_bwd_kernel<<<grid, kThreads, 0, stream>>>(d_out, mask, n, l.vectors, dropout_scale(p), d_in);
  MOESIM_LAUNCH_CHECK("dropout_bwd_kernel");
}

std::size_t swiglu_forward_bytes(std::int64_t rows, std::int64_t ffn) {
  return 3 * static_cast<std::size_t>(rows) * static_cast<std::size_t>(ffn) * 2;
}

std::size_t swiglu_backward_bytes(std::int64_t rows, std::int64_t ffn) {
  return 5 * static_cast<std::size_t>(rows) * static_cast<std::size_t>(ffn) * 2;
}

std::size_t rmsnorm_forward_bytes(std::int64_t rows, std::int64_t hidden) {
  const auto r = static_cast<std::size_t>(rows), h = static_cast<std::size_t>(hidden);
  return 2 * r * h * 2 + h * 2 + r * sizeof(float);
}

std::size_t rmsnorm_backward_bytes(std::int64_t rows, std::int64_t hidden) {
  const auto r = static_cast<std::size_t>(rows), h = static_cast<std::size_t>(hidden);
  return 3 * r * h * 2 + h * 2 + r * sizeof(float) + 2 * h * sizeof(float);
}

std::size_t adam_bytes(std::int64_t n) { return static_cast<std::size_t>(n) * (7 * sizeof(float) + 2); }

std::size_t dropout_forward_bytes(std::int64_t n) { return static_cast<std::size_t>(n) * (2 + 1 + 2); }

std::size_t dropout_backward_bytes(std::int64_t n) { return static_cast<std::size_t>(n) * (2 + 1 + 2); }

}  // namespace moesim::kernels
