// The MoE token kernels: router (scoring + top-k), permute and unpermute. Each is checked against
// its CPU reference on seeded random data at the timed shape (a sample of tokens / rows), then timed.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "calibrate/measure.hpp"
#include "calibrate/measure_internal.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/numeric.hpp"
#include "kernels/permute.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/compare.hpp"
#include "kernels/reference/permute_ref.hpp"
#include "kernels/router.hpp"

namespace moesim::calibrate {
namespace {

using kernels::DeviceBuffer;

constexpr int kCheckedTokens = 1024;  // router tokens compared with the reference (the last one always)
constexpr int kCheckedRows = 64;      // permute rows / unpermute tokens compared

// Indices 0, step, 2 step, ... and the last: the check covers the whole range, not a prefix.
std::vector<int> spread_indices(int n, int count) {
  std::vector<int> out;
  const int step = std::max(1, n / count);
  for (int i = 0; i < n; i += step) out.push_back(i);
  if (out.back() != n - 1) out.push_back(n - 1);
  return out;
}

// Each token picks k distinct experts uniformly (seeded partial Fisher-Yates): balanced on average,
// like a trained router's load-balanced output.
std::vector<std::int32_t> random_routing(int tokens, int experts, int k, std::uint64_t seed) {
  std::vector<std::int32_t> choice(static_cast<std::size_t>(tokens) * static_cast<std::size_t>(k));
  std::vector<std::int32_t> pool(static_cast<std::size_t>(experts));
  for (int t = 0; t < tokens; ++t) {
    std::iota(pool.begin(), pool.end(), 0);
    for (int r = 0; r < k; ++r) {
      const auto j = static_cast<std::size_t>(r) + static_cast<std::size_t>(kernels::random_bits(seed, static_cast<std::uint64_t>(t) * 64 + static_cast<std::uint64_t>(r)) %
                                                                        static_cast<std::uint64_t>(experts - r));
      std::swap(pool[static_cast<std::size_t>(r)], pool[j]);
      choice[static_cast<std::size_t>(t) * static_cast<std::size_t>(k) + static_cast<std::size_t>(r)] = pool[static_cast<std::size_t>(r)];
    }
  }
  return choice;
}

}  // namespace

std::string describe(const KernelTask& t) {
  std::string s = fmt::format("{} tokens", t.tokens);
  if (t.hidden > 0) s += fmt::format(" x {} hidden", t.hidden);
  if (t.experts > 0) s += fmt::format(", {} experts top-{}", t.experts, t.topk);
  return s;
}

void measure_router(MeasureContext& ctx, const KernelTask& task, hw::Profile& profile) {
  const bool sigmoid = task.kernel == hw::MemoryKernel::kRouterSigmoidTopk;
  const auto scoring = sigmoid ? kernels::RouterScoring::kSigmoid : kernels::RouterScoring::kSoftmax;
  const kernels::RouterShape shape{task.tokens, task.experts, task.topk};
  const std::size_t logits_n = static_cast<std::size_t>(task.tokens) * static_cast<std::size_t>(task.experts);
  const std::size_t out_n = static_cast<std::size_t>(task.tokens) * static_cast<std::size_t>(task.topk);
  DeviceBuffer<float> logits(logits_n), prob(out_n);
  DeviceBuffer<std::int32_t> idx(out_n);
  const std::uint64_t seed = 0x4047 + static_cast<std::uint64_t>(task.experts);
  kernels::fill_random_f32(logits.data(), logits_n, seed, 4.0f, 0.0f, ctx.stream);
  idx.fill_bytes(kernels::kPoisonByte);
  prob.fill_bytes(kernels::kPoisonByte);
  kernels::router_topk(logits.data(), shape, scoring, idx.data(), prob.data(), ctx.stream);
  ctx.stream.synchronize();

  const auto got_idx = idx.download();
  const auto got_prob = prob.download();
  std::vector<float> row(static_cast<std::size_t>(task.experts));
  std::vector<std::int32_t> want_idx(static_cast<std::size_t>(task.topk));
  std::vector<float> want_prob(static_cast<std::size_t>(task.topk));
  std::vector<double> got_p, want_p;
  for (const int t : spread_indices(task.tokens, kCheckedTokens)) {
    for (int e = 0; e < task.experts; ++e) {
      row[static_cast<std::size_t>(e)] = kernels::random_uniform(seed, static_cast<std::uint64_t>(t) * static_cast<std::uint64_t>(task.experts) + static_cast<std::uint64_t>(e)) * 4.0f;
    }
    kernels::router_reference_row(row.data(), task.experts, task.topk, scoring, want_idx.data(), want_prob.data());
    for (int r = 0; r < task.topk; ++r) {
      const std::size_t i = static_cast<std::size_t>(t) * static_cast<std::size_t>(task.topk) + static_cast<std::size_t>(r);
      if (got_idx[i] != want_idx[static_cast<std::size_t>(r)]) {
        throw std::runtime_error(fmt::format("wrong result: token {} choice {} is expert {}, reference {}", t, r, got_idx[i], want_idx[static_cast<std::size_t>(r)]));
      }
      got_p.push_back(got_prob[i]);
      want_p.push_back(want_prob[static_cast<std::size_t>(r)]);
    }
  }
  kernels::require_close(kernels::compare(got_p, want_p), 1e-5, "router probabilities");

  const kernels::Summary s = kernels::time_launches(ctx.stream, [&] { kernels::router_topk(logits.data(), shape, scoring, idx.data(), prob.data(), ctx.stream); },
                                                    timing_plan(ctx.plan.repeats));
  const auto bytes = static_cast<std::int64_t>(kernels::router_bytes(shape));
  ctx.log.detail(fmt::format("  {} {}: {:.2f} us (spread {:.2f}), {:.1f} GB/s", hw::to_string(task.kernel), describe(task), s.median, s.spread(),
                             gbps(static_cast<double>(bytes), s.median)));
  profile.kernels.push_back(hw::ProfileKernel{task.kernel, bytes, {{"tokens", task.tokens}, {"experts", task.experts}, {"topk", task.topk}}, to_timing(s)});
}

void measure_permute(MeasureContext& ctx, const KernelTask& task, hw::Profile& profile) {
  const bool forward = task.kernel == hw::MemoryKernel::kPermute;
  const int tokens = task.tokens, hidden = task.hidden, k = task.topk;
  const kernels::RoutingMap map = kernels::build_routing_map(random_routing(tokens, task.experts, k, 0x9e00 + static_cast<std::uint64_t>(k)), tokens, k, task.experts);
  const auto rows = static_cast<int>(map.permuted_token.size());
  const auto h = static_cast<std::size_t>(hidden);
  DeviceBuffer<std::uint16_t> x(static_cast<std::size_t>(tokens) * h), permuted(static_cast<std::size_t>(rows) * h);
  DeviceBuffer<std::int32_t> src(map.permuted_token), prow(map.permuted_row);
  DeviceBuffer<float> probs(map.permuted_row.size());
  constexpr std::uint64_t kXSeed = 0x70c, kPermutedSeed = 0x70d, kProbSeed = 0x9b;
  // Unpermute reads its own random permuted rows (not permute's output), so each kernel's check
  // stands alone.
  kernels::fill_random_bf16(forward ? x.data() : permuted.data(), forward ? x.size() : permuted.size(), forward ? kXSeed : kPermutedSeed, 1.0f, ctx.stream);
  kernels::fill_random_f32(probs.data(), probs.size(), kProbSeed, 0.5f, 0.5f, ctx.stream);
  (forward ? permuted : x).fill_bytes(kernels::kPoisonByte);
  const auto run = [&] {
    if (forward) {
      kernels::permute_tokens(x.data(), src.data(), rows, hidden, permuted.data(), ctx.stream);
    } else {
      kernels::unpermute_tokens(permuted.data(), prow.data(), probs.data(), tokens, k, hidden, x.data(), ctx.stream);
    }
  };
  run();
  ctx.stream.synchronize();

  const auto value = [&](std::uint64_t seed, std::size_t row, std::size_t c) { return kernels::random_bf16(seed, row * h + c); };
  if (forward) {
    for (const int r : spread_indices(rows, kCheckedRows)) {
      const auto got = permuted.download(static_cast<std::size_t>(r) * h, h);
      for (std::size_t c = 0; c < h; ++c) {
        if (got[c] != value(kXSeed, static_cast<std::size_t>(map.permuted_token[static_cast<std::size_t>(r)]), c)) {
          throw std::runtime_error(fmt::format("wrong result: permuted row {} column {} is not token {}'s", r, c, map.permuted_token[static_cast<std::size_t>(r)]));
        }
      }
    }
  } else {
    // The reference on a one-token map: that token's k copies as rows 0..k-1.
    kernels::RoutingMap one;
    one.tokens = 1;
    one.topk = k;
    one.experts = task.experts;
    one.permuted_row.resize(static_cast<std::size_t>(k));
    std::iota(one.permuted_row.begin(), one.permuted_row.end(), 0);
    std::vector<std::uint16_t> copies(static_cast<std::size_t>(k) * h);
    std::vector<float> p(static_cast<std::size_t>(k));
    std::vector<double> want(h), got_all, want_all;
    for (const int t : spread_indices(tokens, kCheckedRows)) {
      for (int s = 0; s < k; ++s) {
        const std::size_t copy = static_cast<std::size_t>(t) * static_cast<std::size_t>(k) + static_cast<std::size_t>(s);
        const auto row = static_cast<std::size_t>(map.permuted_row[copy]);
        for (std::size_t c = 0; c < h; ++c) copies[static_cast<std::size_t>(s) * h + c] = value(kPermutedSeed, row, c);
        p[static_cast<std::size_t>(s)] = kernels::random_uniform(kProbSeed, copy) * 0.5f + 0.5f;
      }
      kernels::unpermute_reference_row(copies.data(), hidden, one, p.data(), 0, want.data());
      const auto got = x.download(static_cast<std::size_t>(t) * h, h);
      for (std::size_t c = 0; c < h; ++c) got_all.push_back(kernels::bf16_to_float(got[c]));
      want_all.insert(want_all.end(), want.begin(), want.end());
    }
    kernels::require_close(kernels::compare(got_all, want_all), 4e-3, "unpermute");
  }

  const kernels::Summary s = kernels::time_launches(ctx.stream, run, timing_plan(ctx.plan.repeats));
  const auto bytes = static_cast<std::int64_t>(forward ? kernels::permute_bytes(tokens, k, hidden) : kernels::unpermute_bytes(tokens, k, hidden));
  ctx.log.detail(fmt::format("  {} {}: {:.2f} us (spread {:.2f}), {:.1f} GB/s", hw::to_string(task.kernel), describe(task), s.median, s.spread(),
                             gbps(static_cast<double>(bytes), s.median)));
  profile.kernels.push_back(hw::ProfileKernel{task.kernel, bytes, {{"tokens", tokens}, {"hidden", hidden}, {"experts", task.experts}, {"topk", k}}, to_timing(s)});
}

void measure_memory_kernels(MeasureContext& ctx, hw::Profile& profile) {
  if (ctx.plan.kernels.empty()) return;
  ctx.log.progress(fmt::format("memory-bound kernels: {} shapes (router, permute, unpermute, cast_fp8)", ctx.plan.kernels.size()));
  for (const KernelTask& task : ctx.plan.kernels) {
    guarded(ctx, fmt::format("{} {}", hw::to_string(task.kernel), describe(task)), [&] {
      if (task.kernel == hw::MemoryKernel::kPermute || task.kernel == hw::MemoryKernel::kUnpermute) {
        measure_permute(ctx, task, profile);
      } else if (task.kernel == hw::MemoryKernel::kCastFp8) {
        measure_cast(ctx, task, profile);
      } else {
        measure_router(ctx, task, profile);
      }
    });
  }
}

}  // namespace moesim::calibrate
