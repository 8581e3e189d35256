#include "program/calibration_request.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <tuple>
#include <vector>

#include "compute/query_log.hpp"
#include "program/layer_cost.hpp"

namespace moesim::program {
namespace lim = hw::calibration_limits;

hw::CalibrationRequest calibration_request_of(const Scenario& s, std::int64_t& left_out) {
  const schedule::StepShape shape = schedule::step_shape(s);
  compute::KernelQueryLog log;
  {
    const program::LayerCostModel lc(s, shape, &log);
    for (std::int64_t l = 0; l < s.model.num_layers; ++l) (void)lc.layer(l);
    (void)lc.embedding_ops();
    (void)lc.output_head_ops();
    if (s.model.mtp_num_layers > 0) (void)lc.mtp_projection_ops();
  }
  hw::CalibrationRequest r;
  left_out = 0;
  const auto fits = [](std::initializer_list<std::int64_t> dims) {
    return std::all_of(dims.begin(), dims.end(), [](std::int64_t d) { return d >= 1 && d <= lim::kMaxDim; });
  };
  for (const auto& g : log.gemm) {
    // Only the calibrator's GEMM precisions (fp16 and blockwise FP8 are not among them).
    if (std::find(lim::kGemmPrecisions.begin(), lim::kGemmPrecisions.end(), g.precision) == lim::kGemmPrecisions.end()) continue;
    if (!fits({g.m, g.n, g.k})) {
      ++left_out;
      continue;
    }
    r.gemm.push_back({g.precision, g.m, g.n, g.k});
  }
  // The calibrator measures grouped GEMMs in BF16: a low-precision scenario's expert shapes are
  // requested in BF16 (docs/profile.md).
  std::set<std::tuple<std::int64_t, std::int64_t, std::vector<std::int64_t>>> grouped;
  for (const auto& g : log.grouped) {
    const bool tokens_fit = static_cast<std::int64_t>(g.tokens.size()) <= lim::kMaxExperts &&
                            std::all_of(g.tokens.begin(), g.tokens.end(), [](std::int64_t t) { return t <= lim::kMaxDim; });
    if (!tokens_fit || !fits({g.n, g.k})) {
      ++left_out;
      continue;
    }
    grouped.insert({g.n, g.k, g.tokens});
  }
  for (const auto& [n, k, tokens] : grouped) r.grouped_gemm.push_back({lim::kGroupedGemmPrecision, tokens, n, k});
  // The log keeps flash and unfused queries apart; the request asks for each shape once (the
  // calibrator times its one attention kernel at it).
  std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>> attention;
  for (const auto& a : log.attention) attention.insert({a.batch_heads, a.seq, a.head_dim, a.causal});
  for (const auto& [batch_heads, seq, head_dim, causal] : attention) {
    if (batch_heads > lim::kMaxAttentionBatchHeads || seq > lim::kMaxAttentionSeq || head_dim > lim::kMaxAttentionHeadDim) {
      ++left_out;
      continue;
    }
    r.attention.push_back({batch_heads, seq, head_dim, causal});
  }
  // Memory-bound kernels by the MoE block's shape: the rank's sequence-parallel share of tokens.
  const std::int64_t tokens = shape.sp_tokens;
  const std::int64_t experts = std::max<std::int64_t>(1, s.model.num_moe_experts);
  const std::int64_t topk = std::max<std::int64_t>(1, s.model.moe_router_topk);
  for (const hw::MemoryKernel k : {hw::MemoryKernel::kPermute, hw::MemoryKernel::kUnpermute,
                                   hw::MemoryKernel::kRouterSoftmaxTopk, hw::MemoryKernel::kCastFp8}) {
    if (!log.memory[static_cast<std::size_t>(k)]) continue;
    const bool router = k == hw::MemoryKernel::kRouterSoftmaxTopk;
    // 16-byte BF16 rows for permute and cast; the router kernel's own expert and top-k limits.
    const bool measurable = fits({tokens, s.model.hidden_size}) && (router || s.model.hidden_size % 8 == 0) &&
                            (!router || (experts <= lim::kMaxRouterExperts && topk <= lim::kMaxRouterTopk));
    if (!measurable) {
      ++left_out;
      continue;
    }
    r.kernels.push_back({k, tokens, s.model.hidden_size, experts, topk});
  }
  return r;
}

}  // namespace moesim::program
