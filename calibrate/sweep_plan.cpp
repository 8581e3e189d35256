#include "calibrate/sweep_plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>

namespace moesim::calibrate {
namespace {

template <class T, class Key>
void add_unique(std::vector<T>& list, T item, Key key) {
  if (std::none_of(list.begin(), list.end(), [&](const T& x) { return key(x) == key(item); })) list.push_back(std::move(item));
}

std::vector<std::size_t> doubling(std::size_t from, std::size_t to, std::size_t factor) {
  std::vector<std::size_t> out;
  for (std::size_t b = from; b <= to; b *= factor) out.push_back(b);
  return out;
}

}  // namespace

std::vector<int> expert_loads(int experts, int total, bool skewed) {
  std::vector<double> w(static_cast<std::size_t>(experts), 1.0);
  if (skewed) {
    for (int e = 0; e < experts; ++e) w[static_cast<std::size_t>(e)] = 1.0 / std::pow(e + 1.0, 1.2);
  }
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<int> loads(static_cast<std::size_t>(experts));
  std::vector<std::pair<double, int>> remainder;
  int given = 0;
  for (int e = 0; e < experts; ++e) {
    const double exact = total * w[static_cast<std::size_t>(e)] / sum;
    loads[static_cast<std::size_t>(e)] = static_cast<int>(std::floor(exact));
    given += loads[static_cast<std::size_t>(e)];
    remainder.emplace_back(exact - std::floor(exact), e);
  }
  std::stable_sort(remainder.begin(), remainder.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (int i = 0; i < total - given; ++i) ++loads[static_cast<std::size_t>(remainder[static_cast<std::size_t>(i)].second)];
  return loads;
}

SweepPlan make_sweep_plan(const hw::CalibrationRequest& request, bool quick) {
  SweepPlan plan;
  plan.quick = quick;
  if (quick) plan.repeats = Repeats{2, 10, 5, 5, 20000};

  // GEMM: squares, then LLM projections (tokens x out x in: Llama-3 QKV / FC1 / FC2, DeepSeek-V3
  // expert FC1 / FC2, MLA output) at two token counts.
  const auto gemm_key = [](const GemmTask& t) { return std::tie(t.precision, t.m, t.n, t.k); };
  const std::vector<std::int64_t> squares = quick ? std::vector<std::int64_t>{512, 2048, 8192}
                                                  : std::vector<std::int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384};
  const std::vector<std::int64_t> token_counts = quick ? std::vector<std::int64_t>{8192} : std::vector<std::int64_t>{2048, 8192};
  const std::vector<std::pair<std::int64_t, std::int64_t>> projections =
      quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{6144, 4096}, {28672, 4096}, {7168, 2048}}
            : std::vector<std::pair<std::int64_t, std::int64_t>>{{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}, {4096, 7168}, {7168, 2048}};
  for (const Precision precision : hw::calibration_limits::kGemmPrecisions) {
    for (const std::int64_t s : squares) add_unique(plan.gemm, GemmTask{precision, s, s, s}, gemm_key);
    for (const std::int64_t m : token_counts) {
      for (const auto& [n, k] : projections) add_unique(plan.gemm, GemmTask{precision, m, n, k}, gemm_key);
    }
  }
  for (const auto& g : request.gemm) add_unique(plan.gemm, GemmTask{g.precision, g.m, g.n, g.k}, gemm_key);

  // Grouped GEMM: 16384 routed rows (8192 tokens x top-8 over 4 EP ranks, say) over 8/32/64 local
  // experts, balanced and Zipf-skewed, DeepSeek-V3's expert FC1 (4096 x 7168) and FC2 (7168 x 2048).
  const auto grouped_key = [](const GroupedTask& t) { return std::tie(t.tokens, t.n, t.k); };
  const std::vector<int> expert_counts = quick ? std::vector<int>{8, 64} : std::vector<int>{8, 32, 64};
  const std::vector<std::pair<std::int64_t, std::int64_t>> expert_shapes =
      quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 7168}} : std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 7168}, {7168, 2048}};
  for (const auto& [n, k] : expert_shapes) {
    for (const int experts : expert_counts) {
      for (const bool skewed : {false, true}) {
        add_unique(plan.grouped, GroupedTask{expert_loads(experts, 16384, skewed), n, k, skewed ? "skewed" : "balanced"}, grouped_key);
      }
    }
  }
  for (const auto& g : request.grouped_gemm) {
    // Token counts fit int: the loader bounds them by hw::calibration_limits::kMaxDim.
    std::vector<int> tokens;
    for (const std::int64_t t : g.tokens) tokens.push_back(static_cast<int>(t));
    add_unique(plan.grouped, GroupedTask{tokens, g.n, g.k, "requested"}, grouped_key);
  }

  // Memory-bound kernels.
  const auto kernel_key = [](const KernelTask& t) { return std::tie(t.kernel, t.tokens, t.hidden, t.experts, t.topk); };
  const std::vector<int> tokens = quick ? std::vector<int>{16384} : std::vector<int>{4096, 16384};
  for (const int t : tokens) {
    for (const int experts : {64, 128, 256}) {
      for (const int topk : {2, 8}) {
        add_unique(plan.kernels, KernelTask{hw::MemoryKernel::kRouterSoftmaxTopk, t, 0, experts, topk}, kernel_key);
        add_unique(plan.kernels, KernelTask{hw::MemoryKernel::kRouterSigmoidTopk, t, 0, experts, topk}, kernel_key);
      }
    }
    for (const int hidden : {4096, 7168}) {
      for (const int topk : {2, 8}) {
        const int experts = topk == 2 ? 64 : 256;
        add_unique(plan.kernels, KernelTask{hw::MemoryKernel::kPermute, t, hidden, experts, topk}, kernel_key);
        add_unique(plan.kernels, KernelTask{hw::MemoryKernel::kUnpermute, t, hidden, experts, topk}, kernel_key);
      }
    }
  }
  for (const auto& [t, h] : quick ? std::vector<std::pair<int, int>>{{4096, 4096}, {16384, 7168}}
                                  : std::vector<std::pair<int, int>>{{4096, 4096}, {16384, 4096}, {16384, 7168}}) {
    add_unique(plan.kernels, KernelTask{hw::MemoryKernel::kCastFp8, t, h, 0, 0}, kernel_key);
  }
  for (const auto& k : request.kernels) {
    const bool router = k.kernel == hw::MemoryKernel::kRouterSoftmaxTopk || k.kernel == hw::MemoryKernel::kRouterSigmoidTopk;
    const bool cast = k.kernel == hw::MemoryKernel::kCastFp8;
    // Within int: the loader bounds every size by hw::calibration_limits.
    add_unique(plan.kernels, KernelTask{k.kernel, static_cast<int>(k.tokens), router ? 0 : static_cast<int>(k.hidden), cast ? 0 : static_cast<int>(k.experts),
                                        cast ? 0 : static_cast<int>(k.topk)},
               kernel_key);
  }

  plan.copy_bytes = doubling(std::size_t{1} << 20, std::size_t{1} << 30, quick ? 4 : 2);

  // Attention: 16 heads of 128 at 2k/4k/8k, causal (the score matrices reach 2 GiB at 8k).
  const auto attention_key = [](const AttentionTask& t) { return std::tie(t.batch_heads, t.seq, t.head_dim, t.causal); };
  for (const int seq : {2048, 4096, 8192}) add_unique(plan.attention, AttentionTask{16, seq, 128, true}, attention_key);
  for (const auto& a : request.attention) {
    add_unique(plan.attention, AttentionTask{static_cast<int>(a.batch_heads), static_cast<int>(a.seq), static_cast<int>(a.head_dim), a.causal}, attention_key);
  }

  plan.collective_bytes = doubling(std::size_t{1} << 10, std::size_t{1} << 30, quick ? 4 : 2);
  return plan;
}

}  // namespace moesim::calibrate
