#include "compute/kernel_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "compute/attention_efficiency.hpp"
#include "core/error.hpp"

namespace moesim::compute {
namespace {

// Gap between back-to-back kernels on one stream (launch latency + prologue/epilogue). NVIDIA's
// "Getting Started with CUDA Graphs" blog measures ~2-3 µs per short kernel without graphs; the
// Azure square-GEMM sweeps in tests/validation (1024³ on H100 runs in ~8 µs for ~3 µs of math)
// agree with a gap of this size.
constexpr double kLaunchGapSeconds = 2.5e-6;

// Output tiles cuBLAS/CUTLASS choose between (CUTLASS profiler's default Hopper/Ampere tile set) and
// the fraction of the large-tile throughput each sustains: smaller tiles reuse operands less from
// shared memory. The heuristic picks the tile that maximises (tile efficiency × SM fill).
using TileOption = KernelCostModel::TileOption;
constexpr std::array<TileOption, 4> kTiles{{{128, 256, 1.00}, {128, 128, 0.92}, {64, 128, 0.78}, {64, 64, 0.55}}};

// Main-loop share of a tile's work: each tile pays a fixed prologue/epilogue of about one 64-deep
// K-slice, which matters for short K (router GEMMs, small experts).
constexpr double kTileKOverhead = 64.0;

// Split-K (CUTLASS's split_k_slices / cuBLAS's split-K kernels, the reason cuBLASLt exposes
// CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES): when the output has fewer tiles than SMs, the K loop is
// cut into slices that run as separate tiles and write FP32 partial sums that a reduction adds up.
// moesim considers it only for a GEMM whose output fills less than one wave (the weight gradients of
// routers and other small matrices, whose K is the token count), in powers of two up to 16 slices,
// each at least four 64-deep main-loop stages long (a multistage pipeline needs that many to fill).
constexpr std::int64_t kMaxSplitK = 16;
constexpr std::int64_t kMinSplitKDepth = 256;
constexpr double kSplitKPartialBytes = 4.0;  // FP32 partial sums

// The slices' partial sums, written by the GEMM and read back once by the reduction.
double split_k_partial_bytes(const GemmShape& s, std::int64_t slices) {
  return slices > 1 ? 2.0 * static_cast<double>(slices * s.m * s.n * s.batch) * kSplitKPartialBytes : 0.0;
}

// FlashAttention-2 backward reaches ~63 % of A100 peak against ~73 % forward (Dao 2023, arXiv
// 2307.08691, abstract and §4.1): backward runs at 0.86 of the forward rate and does 2.5× the
// forward FLOPs (five matrix products against two).
constexpr double kFlashBackwardRelativeRate = 0.86;
constexpr double kFlashBackwardFlopsRatio = 2.5;

// Hopper's FP8 tensor cores accumulate in reduced precision (about 22 bits; DeepSeek-V3 report,
// arXiv 2412.19437 §3.3.2). A split accumulator periodically promotes partial sums to FP32, which
// costs GEMM throughput: pytorch/ao issue #2377 measures fast accumulation 1.1-1.2x faster than the
// split mode on H100 (the midpoint is taken). Blackwell's tensor cores accumulate block-scaled and
// per-tensor FP8 in full FP32 and have no fast mode (TransformerEngine PR #2748 review: "there is no
// fastAccuMode for sm100"), and 16-bit GEMMs accumulate in FP32 everywhere.
constexpr double kHopperFp8SplitAccumulatorSlowdown = 1.15;

bool is_fp8_family(Precision p) { return p == Precision::kFp8 || p == Precision::kFp8Blockwise; }

double ceil_div(double a, double b) { return std::ceil(a / b); }

}  // namespace

std::span<const KernelCostModel::TileOption> KernelCostModel::tile_options() { return kTiles; }

double KernelCostModel::tile_k_overhead() { return kTileKOverhead; }

KernelCostModel::KernelCostModel(const hw::GpuSpec& gpu, std::shared_ptr<const hw::Profile> profile,
                                 hw::GroupedImplementation grouped)
    : gpu_(gpu),
      bf16_peak_(gpu.peak(Precision::kBf16).value_or(FlopsPerSecond(0))),
      achievable_hbm_(gpu.hbm_bandwidth * gpu.hbm_efficiency),
      launch_gap_(kLaunchGapSeconds),
      profile_(std::move(profile)),
      grouped_(grouped) {
  if (bf16_peak_.value() <= 0 || achievable_hbm_.value() <= 0 || gpu.sm_count <= 0 || gpu.gemm_peak_efficiency <= 0) {
    throw InternalError("GPU spec '" + gpu.name + "' lacks bf16 peak, HBM bandwidth, SM count or GEMM efficiency");
  }
  if (profile_) tables_ = kernel_tables(*profile_, gpu_);
}

double KernelCostModel::gemm_efficiency(const GemmShape& s, std::int64_t split_k) const {
  const double sms = gpu_.sm_count;
  const double slices = static_cast<double>(std::max<std::int64_t>(split_k, 1));
  double best = 0.0;
  for (const TileOption& t : kTiles) {
    const double tiles_m = ceil_div(static_cast<double>(s.m), static_cast<double>(t.rows));
    const double tiles_n = ceil_div(static_cast<double>(s.n), static_cast<double>(t.cols));
    const double tiles = tiles_m * tiles_n * static_cast<double>(s.batch) * slices;
    const double waves = std::ceil(tiles / sms);
    const double sm_fill = tiles / (waves * sms);
    // Padding of partial tiles is computed and thrown away.
    const double useful = static_cast<double>(s.m * s.n) / (tiles_m * static_cast<double>(t.rows) * tiles_n *
                                                            static_cast<double>(t.cols));
    best = std::max(best, t.relative_efficiency * sm_fill * useful);
  }
  const double depth = static_cast<double>(s.k) / slices;
  const double k_share = depth / (depth + kTileKOverhead);
  return gpu_.gemm_peak_efficiency * best * k_share;
}

std::int64_t KernelCostModel::split_k_slices(const GemmShape& s, FlopsPerSecond peak) const {
  const double sms = gpu_.sm_count;
  const double largest_tile = static_cast<double>(kTiles.front().rows * kTiles.front().cols);
  const double output_tiles = static_cast<double>(s.m * s.n * s.batch) / largest_tile;
  if (output_tiles >= sms) return 1;
  const double flops = 2.0 * static_cast<double>(s.m * s.n * s.k * s.batch);
  auto seconds = [&](std::int64_t slices) {
    return flops / (peak.value() * gemm_efficiency(s, slices)) +
           split_k_partial_bytes(s, slices) / achievable_hbm_.value();
  };
  std::int64_t best = 1;
  double best_seconds = seconds(1);
  for (std::int64_t slices = 2; slices <= kMaxSplitK && s.k / slices >= kMinSplitKDepth; slices *= 2) {
    const double t = seconds(slices);
    if (t < best_seconds) {
      best = slices;
      best_seconds = t;
    }
  }
  return best;
}

double KernelCostModel::accumulation_slowdown(Precision precision, Accumulation accumulation) const {
  const bool reduced_precision_accumulator = gpu_.architecture == "hopper";
  if (accumulation == Accumulation::kSplit && reduced_precision_accumulator && is_fp8_family(precision)) {
    return kHopperFp8SplitAccumulatorSlowdown;
  }
  return 1.0;
}

Seconds KernelCostModel::gemm(const GemmShape& s, Precision precision, Accumulation accumulation) const {
  if (log_ && s.batch == 1 && s.m > 0 && s.n > 0 && s.k > 0) log_->gemm.insert({precision, s.m, s.n, s.k});
  const Seconds roofline = roofline_gemm(s, precision, accumulation);
  if (!tables_ || roofline.value() <= 0) return roofline;
  const std::size_t p = index_of(precision);
  if (s.batch > 1) {
    // Batched GEMMs (the unfused attention's) have no table: the profile's GEMMs are single.
    ++usage_.batched_gemm[p].fallback;
    return roofline;
  }
  const RatioTable& table = tables_->gemm[p];
  if (table.empty()) {
    ++usage_.gemm[p].fallback;
    return roofline;
  }
  bool outside = false;
  const double ratio = table.ratio({std::log(static_cast<double>(s.m)), std::log(static_cast<double>(s.n)),
                                    std::log(static_cast<double>(s.k)), 0.0},
                                   outside);
  ++(outside ? usage_.gemm[p].outside : usage_.gemm[p].interpolated);
  return roofline * ratio;
}

Seconds KernelCostModel::roofline_gemm(const GemmShape& s, Precision precision, Accumulation accumulation) const {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0 || s.batch <= 0) return Seconds(0);
  const FlopsPerSecond peak = gpu_.peak(precision).value_or(bf16_peak_);
  const Flops flops(2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
                    static_cast<double>(s.batch));
  // The shape factors scale the sustained ceiling of the precision the GEMM runs in.
  const double ceiling_ratio = gpu_.gemm_efficiency_ceiling(precision) / gpu_.gemm_peak_efficiency;
  const FlopsPerSecond sustained_peak = peak * (ceiling_ratio * gpu_.sustained_tensor_rate);
  const std::int64_t slices = split_k_slices(s, sustained_peak);
  const Seconds compute_time =
      flops / (sustained_peak * gemm_efficiency(s, slices)) * accumulation_slowdown(precision, accumulation);
  const double in_bytes = gemm_operand_bytes(precision);
  const Bytes traffic(static_cast<double>(s.batch) *
                      (in_bytes * static_cast<double>(s.m * s.k + s.k * s.n) + 2.0 * static_cast<double>(s.m * s.n)));
  const Seconds memory_time = traffic / achievable_hbm_;
  const Seconds reduction = Bytes(split_k_partial_bytes(s, slices)) / achievable_hbm_;
  return std::max(compute_time, memory_time) + reduction + launch_gap_;
}

Seconds KernelCostModel::memory_bound(Bytes bytes, hw::MemoryKernel kind) const {
  if (bytes.value() <= 0) return Seconds(0);
  if (log_) log_->memory[static_cast<std::size_t>(kind)] = true;
  if (tables_) {
    const BandwidthCurve& curve = tables_->memory[static_cast<std::size_t>(kind)];
    QueryCounts& count = usage_.memory[static_cast<std::size_t>(kind)];
    if (!curve.empty()) {
      bool outside = false;
      const double bandwidth = curve.bandwidth(bytes.value(), outside);
      ++(outside ? count.outside : count.interpolated);
      return Seconds(bytes.value() / bandwidth);
    }
    ++count.fallback;
  }
  return bytes / achievable_hbm_ + launch_gap_;
}

Seconds KernelCostModel::memory_bound_fused(Bytes bytes, hw::MemoryKernel kind) const {
  if (bytes.value() <= 0) return Seconds(0);
  const Seconds t = memory_bound(bytes, kind);
  // The roofline's form subtracts the gap it added (the same arithmetic as before profiles existed);
  // a measured bandwidth carries no separate gap.
  if (tables_ && !tables_->memory[static_cast<std::size_t>(kind)].empty()) return t;
  return t - launch_gap_;
}

bool KernelCostModel::calibrated_grouped(Precision precision) const {
  return tables_ && !tables_->grouped[index_of(precision)][static_cast<std::size_t>(grouped_)].empty();
}

std::optional<double> KernelCostModel::grouped_ratio(double total_tokens, std::int64_t n, std::int64_t k,
                                                     std::int64_t experts, Precision precision, bool wgrad) const {
  if (!tables_) return std::nullopt;
  const std::size_t p = index_of(precision);
  const RatioTable& table = tables_->grouped[p][static_cast<std::size_t>(grouped_)];
  if (table.empty() || total_tokens <= 0 || n <= 0 || k <= 0 || experts <= 0) {
    ++usage_.grouped[p].fallback;
    return std::nullopt;
  }
  bool outside = false;
  const double ratio = table.ratio({std::log(total_tokens), std::log(static_cast<double>(n)),
                                    std::log(static_cast<double>(k)), std::log(static_cast<double>(experts))},
                                   outside);
  ++(outside ? usage_.grouped[p].outside : usage_.grouped[p].interpolated);
  if (wgrad) ++usage_.grouped_wgrad;
  return ratio;
}

std::optional<double> KernelCostModel::attention_ratio(const AttentionShape& a, hw::AttentionImplementation impl,
                                                      hw::AttentionDirection d) const {
  if (!tables_) return std::nullopt;
  const auto ii = static_cast<std::size_t>(impl);
  const auto di = static_cast<std::size_t>(d);
  const RatioTable& table = tables_->attention[ii][di][a.causal ? 1 : 0];
  QueryCounts& count = usage_.attention[ii][di];
  if (table.empty()) {
    ++count.fallback;
    return std::nullopt;
  }
  bool outside = false;
  const double head_dim = 0.5 * static_cast<double>(a.head_dim_qk + a.head_dim_v);
  const double ratio = table.ratio({std::log(static_cast<double>(a.batch_heads)),
                                    std::log(static_cast<double>(a.query_len)), std::log(head_dim), 0.0},
                                   outside);
  ++(outside ? count.outside : count.interpolated);
  return ratio;
}

Flops KernelCostModel::attention_forward_flops(const AttentionShape& a) {
  const double pairs = static_cast<double>(a.query_len) * static_cast<double>(a.key_span) * (a.causal ? 0.5 : 1.0);
  return Flops(2.0 * static_cast<double>(a.batch_heads) * pairs * static_cast<double>(a.head_dim_qk + a.head_dim_v));
}

namespace {
void log_attention(KernelQueryLog* log, const AttentionShape& a, hw::AttentionImplementation impl) {
  if (!log || a.batch_heads <= 0) return;
  log->attention.insert({impl, a.batch_heads, a.query_len, (a.head_dim_qk + a.head_dim_v + 1) / 2, a.causal});
}
}  // namespace

Seconds KernelCostModel::flash_attention(const AttentionShape& a, Seconds roofline, hw::AttentionDirection d) const {
  log_attention(log_, a, hw::AttentionImplementation::kFlash);
  // A call with no work (no heads) is neither scaled nor counted as a profile query.
  if (roofline.value() <= 0) return roofline;
  return roofline * attention_ratio(a, hw::AttentionImplementation::kFlash, d).value_or(1.0);
}

Seconds KernelCostModel::flash_attention_forward(const AttentionShape& a) const {
  return flash_attention(a, roofline_flash_attention_forward(a), hw::AttentionDirection::kForward);
}

Seconds KernelCostModel::flash_attention_backward(const AttentionShape& a) const {
  return flash_attention(a, roofline_flash_attention_backward(a), hw::AttentionDirection::kBackward);
}

Seconds KernelCostModel::roofline_flash_attention_forward(const AttentionShape& a) const {
  if (a.batch_heads <= 0) return Seconds(0);
  const double calls = static_cast<double>(std::max<std::int64_t>(1, a.cp_ring_steps));
  return attention_forward_flops(a) * attention_shape_time_factor(a) / (bf16_peak_ * (gpu_.attention_efficiency * gpu_.sustained_tensor_rate)) +
         launch_gap_ * calls;
}

Seconds KernelCostModel::roofline_flash_attention_backward(const AttentionShape& a) const {
  if (a.batch_heads <= 0) return Seconds(0);
  const Flops flops = attention_forward_flops(a) * kFlashBackwardFlopsRatio;
  const double calls = static_cast<double>(std::max<std::int64_t>(1, a.cp_ring_steps));
  const FlopsPerSecond rate =
      bf16_peak_ * (gpu_.attention_efficiency * kFlashBackwardRelativeRate * gpu_.sustained_tensor_rate);
  return flops * attention_shape_time_factor(a) / rate + launch_gap_ * calls;
}

namespace {
// Bytes per attention-score element moved by the unfused kernels (2-byte scores). Forward: the fused
// scale-mask-softmax reads and writes s×s (4); dropout reads it, writes it and a 1-byte mask (5).
// Backward: softmax backward reads output and gradient and writes one (6); dropout backward (5). They
// are split because the calibrated unfused core (kernels/attention) has the softmax but no dropout:
// a profile's ratio corrects the first, the second stays memory-bound. Uncalibrated, the two are one
// memory-bound term of 9 and 11 bytes, as before profiles had unfused rows.
constexpr double kUnfusedSoftmaxForwardBytesPerScore = 4.0;
constexpr double kUnfusedDropoutForwardBytesPerScore = 5.0;
constexpr double kUnfusedSoftmaxBackwardBytesPerScore = 6.0;
constexpr double kUnfusedDropoutBackwardBytesPerScore = 5.0;

double score_count(const AttentionShape& a) {
  return static_cast<double>(a.batch_heads) * static_cast<double>(a.query_len) * static_cast<double>(a.key_span);
}

// Attention GEMMs stay in 16-bit even in FP8 recipes.
Precision unfused_gemm_precision(Precision precision) {
  return (precision == Precision::kFp16) ? Precision::kFp16 : Precision::kBf16;
}

// dV = Pᵀ·dO, dP = dO·Vᵀ, dQ = dS·K, dK = dSᵀ·Q.
std::array<GemmShape, 4> unfused_backward_gemms(const AttentionShape& a) {
  return {GemmShape{a.key_span, a.head_dim_v, a.query_len, a.batch_heads},
          GemmShape{a.query_len, a.key_span, a.head_dim_v, a.batch_heads},
          GemmShape{a.query_len, a.head_dim_qk, a.key_span, a.batch_heads},
          GemmShape{a.key_span, a.head_dim_qk, a.query_len, a.batch_heads}};
}
}  // namespace

Seconds KernelCostModel::roofline_unfused_attention_forward(const AttentionShape& a, Precision precision) const {
  if (a.batch_heads <= 0) return Seconds(0);
  const Precision p = unfused_gemm_precision(precision);
  const Seconds qk = roofline_gemm({a.query_len, a.key_span, a.head_dim_qk, a.batch_heads}, p);
  const Seconds pv = roofline_gemm({a.query_len, a.head_dim_v, a.key_span, a.batch_heads}, p);
  // The softmax as memory_bound's roofline form prices it (one launch).
  return qk + pv + Bytes(score_count(a) * kUnfusedSoftmaxForwardBytesPerScore) / achievable_hbm_ + launch_gap_;
}

Seconds KernelCostModel::roofline_unfused_attention_backward(const AttentionShape& a, Precision precision) const {
  if (a.batch_heads <= 0) return Seconds(0);
  const Precision p = unfused_gemm_precision(precision);
  Seconds gemms(0);
  for (const GemmShape& g : unfused_backward_gemms(a)) gemms = gemms + roofline_gemm(g, p);
  return gemms + Bytes(score_count(a) * kUnfusedSoftmaxBackwardBytesPerScore) / achievable_hbm_ + launch_gap_;
}

Seconds KernelCostModel::unfused_attention_forward(const AttentionShape& a, Precision precision) const {
  if (a.batch_heads <= 0) return Seconds(0);
  log_attention(log_, a, hw::AttentionImplementation::kUnfused);
  const double scores = score_count(a);
  if (const auto ratio = attention_ratio(a, hw::AttentionImplementation::kUnfused, hw::AttentionDirection::kForward)) {
    return roofline_unfused_attention_forward(a, precision) * *ratio +
           memory_bound(Bytes(scores * kUnfusedDropoutForwardBytesPerScore));
  }
  const Precision p = unfused_gemm_precision(precision);
  const Seconds qk = gemm({a.query_len, a.key_span, a.head_dim_qk, a.batch_heads}, p);
  const Seconds pv = gemm({a.query_len, a.head_dim_v, a.key_span, a.batch_heads}, p);
  return qk + pv +
         memory_bound(Bytes(scores * (kUnfusedSoftmaxForwardBytesPerScore + kUnfusedDropoutForwardBytesPerScore)));
}

Seconds KernelCostModel::unfused_attention_backward(const AttentionShape& a, Precision precision) const {
  if (a.batch_heads <= 0) return Seconds(0);
  log_attention(log_, a, hw::AttentionImplementation::kUnfused);
  const double scores = score_count(a);
  if (const auto ratio =
          attention_ratio(a, hw::AttentionImplementation::kUnfused, hw::AttentionDirection::kBackward)) {
    return roofline_unfused_attention_backward(a, precision) * *ratio +
           memory_bound(Bytes(scores * kUnfusedDropoutBackwardBytesPerScore));
  }
  const Precision p = unfused_gemm_precision(precision);
  const std::array<GemmShape, 4> g = unfused_backward_gemms(a);
  const Seconds dv = gemm(g[0], p);
  const Seconds dp = gemm(g[1], p);
  const Seconds dq = gemm(g[2], p);
  const Seconds dk = gemm(g[3], p);
  return dv + dp + dq + dk +
         memory_bound(Bytes(scores * (kUnfusedSoftmaxBackwardBytesPerScore + kUnfusedDropoutBackwardBytesPerScore)));
}

}  // namespace moesim::compute
