#include "calibrate/summary.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include <fmt/format.h>

namespace moesim::calibrate {
namespace {

double gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e-6) / 1e9 : 0; }

std::string shape_text(const hw::ProfileKernel& r) {
  std::string s;
  for (const auto& [k, v] : r.shape) s += fmt::format("{}{}={}", s.empty() ? "" : " ", k, v);
  return s;
}

const char* verdict(double pct, double target) { return pct >= target ? "meets" : "BELOW"; }

}  // namespace

bool Efficiency::meets_targets() const {
  const auto ok = [](const std::optional<double>& v, double t) { return !v || *v >= t; };
  return ok(permute_pct, kPermuteTargetPct) && ok(unpermute_pct, kPermuteTargetPct) && ok(router_pct, kRouterTargetPct) &&
         ok(gemm_bf16_min_pct, kGemmTargetPct);
}

Efficiency efficiency_summary(const hw::Profile& profile) {
  Efficiency e;
  // The largest row of each memory-bound kernel.
  std::map<std::string_view, const hw::ProfileKernel*> largest;
  for (const hw::ProfileKernel& r : profile.kernels) {
    const hw::ProfileKernel*& slot = largest[hw::to_string(r.kernel)];
    if (slot == nullptr || r.bytes > slot->bytes) slot = &r;
  }
  if (const auto it = largest.find("copy"); it != largest.end()) {
    e.copy_gbps = gbps(static_cast<double>(it->second->bytes), it->second->time.median_us);
    e.lines.push_back(fmt::format("copy ({}): {:.0f} GB/s read+written: the reference below", shape_text(*it->second), e.copy_gbps));
  } else {
    e.lines.emplace_back("copy: not measured, no ratios");
  }
  const auto ratio = [&](const char* kernel, double target, std::optional<double>& out) {
    const auto it = largest.find(kernel);
    if (it == largest.end() || e.copy_gbps <= 0) return;
    const double bw = gbps(static_cast<double>(it->second->bytes), it->second->time.median_us);
    const double pct = 100 * bw / e.copy_gbps;
    out = out ? std::min(*out, pct) : pct;
    e.lines.push_back(target > 0 ? fmt::format("{} ({}): {:.0f} GB/s = {:.1f}% of copy (target >= {:.0f}%: {})", kernel, shape_text(*it->second), bw, pct,
                                               target, verdict(pct, target))
                                 : fmt::format("{} ({}): {:.0f} GB/s = {:.1f}% of copy", kernel, shape_text(*it->second), bw, pct));
  };
  std::optional<double> unused;
  ratio("permute", kPermuteTargetPct, e.permute_pct);
  ratio("unpermute", kPermuteTargetPct, e.unpermute_pct);
  ratio("router_softmax_topk", kRouterTargetPct, e.router_pct);
  ratio("router_sigmoid_topk", kRouterTargetPct, e.router_pct);
  ratio("cast_fp8", 0, unused);

  for (const char* precision : {"bf16", "fp8", "mxfp8", "nvfp4"}) {
    std::vector<double> pcts;
    const hw::ProfileGemm* worst = nullptr;
    for (const hw::ProfileGemm& r : profile.gemm) {
      if (hw::profile_precision_name(r.precision) != precision || r.time.median_us <= 0) continue;
      const double pct = 100 * r.best_algorithm_us / r.time.median_us;
      if (worst == nullptr || pct < pcts.front()) worst = &r;
      pcts.push_back(pct);
      std::sort(pcts.begin(), pcts.end());
    }
    if (pcts.empty()) continue;
    const double median = pcts[pcts.size() / 2];
    if (std::string(precision) == "bf16") e.gemm_bf16_min_pct = pcts.front();
    e.lines.push_back(fmt::format("gemm {}: heuristic#0 at {:.1f}% of the best algorithm's speed at worst ({}x{}x{}), median {:.1f}% over {} shapes{}",
                                  precision, pcts.front(), worst->m, worst->n, worst->k, median, pcts.size(),
                                  std::string(precision) == "bf16" ? fmt::format(" (target >= {:.0f}%: {})", kGemmTargetPct, verdict(pcts.front(), kGemmTargetPct)) : ""));
  }

  // Grouped GEMM: how much the per-expert loop loses to (or gains on) the grouped-batched call.
  std::vector<double> loop_over_batched;
  for (const hw::ProfileGroupedGemm& a : profile.grouped_gemm) {
    if (a.implementation != hw::GroupedImplementation::kLoop) continue;
    for (const hw::ProfileGroupedGemm& b : profile.grouped_gemm) {
      if (b.implementation == hw::GroupedImplementation::kGroupedBatched && b.tokens == a.tokens && b.n == a.n && b.k == a.k &&
          b.time.median_us > 0) {
        loop_over_batched.push_back(a.time.median_us / b.time.median_us);
      }
    }
  }
  if (!loop_over_batched.empty()) {
    const auto [lo, hi] = std::minmax_element(loop_over_batched.begin(), loop_over_batched.end());
    e.lines.push_back(fmt::format("grouped gemm: loop time / grouped_batched time from {:.2f} to {:.2f} over {} expert loads", *lo, *hi, loop_over_batched.size()));
  }
  for (const hw::ProfileAttention& a : profile.attention) {
    if (a.direction != hw::AttentionDirection::kForward) continue;
    const double flops = 4.0 * static_cast<double>(a.batch_heads) * static_cast<double>(a.seq) * static_cast<double>(a.seq) * static_cast<double>(a.head_dim);
    e.lines.push_back(fmt::format("{} attention forward {}x{}x{}{}: {:.0f} us, {:.0f} TFLOP/s on the dense GEMMs", hw::to_string(a.implementation),
                                  a.batch_heads, a.seq, a.head_dim, a.causal ? " causal" : "", a.time.median_us, flops / (a.time.median_us * 1e-6) / 1e12));
  }
  // By name, so the lines come in the order they always have (alphabetical).
  std::map<std::string_view, const hw::ProfileCollective*> top;
  for (const hw::ProfileCollective& c : profile.collectives) {
    const hw::ProfileCollective*& slot = top[hw::to_string(c.op)];
    if (slot == nullptr || c.ranks > slot->ranks || (c.ranks == slot->ranks && c.bytes > slot->bytes)) slot = &c;
  }
  for (const auto& [op, c] : top) {
    e.lines.push_back(fmt::format("nccl {} {} ranks {} B: algbw {:.1f} GB/s, busbw {:.1f} GB/s", op, c->ranks, c->bytes, c->algbw_gbps, c->busbw_gbps));
  }
  return e;
}

}  // namespace moesim::calibrate
