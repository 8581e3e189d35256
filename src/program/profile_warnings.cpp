#include "program/profile_warnings.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "core/format.hpp"

namespace moesim::program {
namespace {

using compute::QueryCounts;
using compute::RatioTable;

/// "m×n×k 1024..10240 × 1024..10240 × 1024..13312": the measured range of each size.
std::string range_of(const RatioTable& t, const std::string& names) {
  std::vector<std::string> parts;
  for (std::size_t d = 0; d < t.dims; ++d) {
    parts.push_back(fmt::format("{}..{}", std::llround(std::exp(t.lo[d])), std::llround(std::exp(t.hi[d]))));
  }
  return names + " " + join(parts, " × ");
}

std::string queries(std::int64_t n) { return fmt::format("{} quer{}", n, n == 1 ? "y" : "ies"); }

/// "KIND interpolated (N queries, M outside measured range R, clamped to it)" and/or
/// "KIND fell back to roofline (N queries, WHY)".
std::vector<std::string> answered(const std::string& kind, const QueryCounts& c, const std::string& range,
                                  const std::string& why_fallback, const std::string& extra = "") {
  std::vector<std::string> out;
  if (c.from_profile() > 0) {
    std::string s = kind + " interpolated (" + queries(c.from_profile());
    if (c.outside > 0) s += fmt::format(", {} outside measured range {}, clamped to it", c.outside, range);
    out.push_back(s + extra + ")");
  }
  if (c.fallback > 0) out.push_back(kind + " fell back to roofline (" + queries(c.fallback) + ", " + why_fallback + ")");
  return out;
}

void append(std::vector<std::string>& to, const std::vector<std::string>& items) {
  to.insert(to.end(), items.begin(), items.end());
}

std::string_view precision_name(std::size_t i) { return to_string(kAllPrecisions[i]); }

}  // namespace

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  double v = bytes;
  while (u + 1 < kUnits.size() && v >= 1024.0) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.3g} {}", v, kUnits[u]);
}

std::vector<std::string> profile_warnings(const hw::Profile& profile, const compute::KernelCostModel& kernels,
                                          const collective::CollectiveCostModel& collectives) {
  std::vector<std::string> out;
  const std::string prefix = "profile " + profile.name + ": ";
  out.push_back(fmt::format("calibration profile {}: {} figures for {} ({}); kernel and collective times are "
                            "interpolated in its tables where it has rows, the lines below say which",
                            profile.name, to_string(profile.provenance.source), profile.provenance.gpu, profile.file));
  const compute::KernelProfileUsage& u = kernels.profile_usage();
  const compute::KernelProfileTables* t = kernels.profile_tables();
  if (!t) return out;

  std::vector<std::string> gemm;
  for (std::size_t p = 0; p < compute::kPrecisionCount; ++p) {
    const std::string name(precision_name(p));
    append(gemm, answered("gemm " + name, u.gemm[p], range_of(t->gemm[p], "m×n×k"), "no " + name + " rows"));
    append(gemm, answered("batched gemm " + name, u.batched_gemm[p], "", "the profile's GEMMs are single, not batched"));
  }
  if (!gemm.empty()) out.push_back(prefix + join(gemm, "; "));

  std::vector<std::string> grouped;
  const auto impl = static_cast<std::size_t>(kernels.grouped_implementation());
  const std::string impl_name(to_string(kernels.grouped_implementation()));
  for (std::size_t p = 0; p < compute::kPrecisionCount; ++p) {
    const std::string name(precision_name(p));
    const std::string extra =
        u.grouped_wgrad > 0 ? fmt::format("; {} weight-gradient groups take their forward problem's ratio", u.grouped_wgrad)
                            : "";
    // The implementation is the one the scenario's framework runs: Megatron's moe_grouped_gemm.
    append(grouped, answered(fmt::format("grouped_gemm {} {} (moe.grouped_gemm {})", name, impl_name,
                                         impl_name == "loop" ? "false" : "true"),
                             u.grouped[p], range_of(t->grouped[p][impl], "tokens×n×k×experts"),
                             "no " + impl_name + " " + name + " rows", extra));
  }
  if (!grouped.empty()) out.push_back(prefix + join(grouped, "; "));

  bool any_memory_rows = false;
  for (const auto& c : t->memory) any_memory_rows = any_memory_rows || !c.empty();
  std::vector<std::string> memory;
  if (!any_memory_rows) {
    // One item when the profile has no kernels table at all (the published profiles).
    std::int64_t total = 0;
    std::vector<std::string> kinds;
    for (std::size_t k = 0; k < hw::kMemoryKernelCount; ++k) {
      if (u.memory[k].total() == 0) continue;
      total += u.memory[k].total();
      kinds.push_back(fmt::format("{} {}", to_string(static_cast<hw::MemoryKernel>(k)), u.memory[k].total()));
    }
    if (total > 0) {
      memory.push_back(fmt::format("memory-bound kernels fell back to roofline ({}, no kernels rows: {})", queries(total),
                                   join(kinds)));
    }
  } else {
    for (std::size_t k = 0; k < hw::kMemoryKernelCount; ++k) {
      const std::string name(to_string(static_cast<hw::MemoryKernel>(k)));
      const compute::BandwidthCurve& c = t->memory[k];
      const std::string range = c.empty() ? ""
                                          : "bytes " + format_bytes(std::exp(c.log_bytes.front())) + ".." +
                                                format_bytes(std::exp(c.log_bytes.back()));
      append(memory, answered(name + " (memory-bound, by bytes)", u.memory[k], range, "no " + name + " rows"));
    }
  }
  if (!memory.empty()) out.push_back(prefix + join(memory, "; "));

  bool any_attention_rows = false;
  for (const auto& by_direction : t->attention) {
    for (const auto& by_causal : by_direction) {
      for (const auto& table : by_causal) any_attention_rows = any_attention_rows || !table.empty();
    }
  }
  std::vector<std::string> attention;
  for (std::size_t i = 0; i < hw::kAttentionImplementationCount; ++i) {
    // Flash and unfused rows time different kernels and answer only their own path's queries, so the
    // line says which implementation was answered or fell back.
    const std::string attention_impl(to_string(static_cast<hw::AttentionImplementation>(i)));
    bool any_attention_impl_rows = false;
    for (const auto& by_causal : t->attention[i]) {
      for (const auto& table : by_causal) any_attention_impl_rows = any_attention_impl_rows || !table.empty();
    }
    for (std::size_t d = 0; d < 2; ++d) {
      const std::string name(to_string(static_cast<hw::AttentionDirection>(d)));
      // Causal and non-causal rows are separate tables; the range shown is the causal one's when it has rows.
      const RatioTable& table = t->attention[i][d][1].empty() ? t->attention[i][d][0] : t->attention[i][d][1];
      std::string why = "no " + attention_impl + " " + name + " rows of this causality";
      if (!any_attention_rows) {
        why = "no attention rows";
      } else if (!any_attention_impl_rows) {
        why = "no " + attention_impl + " attention rows";
      }
      append(attention, answered(attention_impl + " attention " + name, u.attention[i][d],
                                 range_of(table, "batch_heads×seq×head_dim"), why));
    }
  }
  if (!attention.empty()) out.push_back(prefix + join(attention, "; "));

  const collective::CollectiveProfileUsage& cu = collectives.profile_usage();
  std::vector<collective::CollectiveQueryCounts> entries(cu.entries.begin(),
                                                         cu.entries.begin() + static_cast<std::ptrdiff_t>(cu.size));
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return std::pair(static_cast<int>(a.op), a.ranks) < std::pair(static_cast<int>(b.op), b.ranks);
  });
  std::vector<std::string> comms;
  const collective::CollectiveProfileTables* ct = collectives.profile_tables();
  for (const auto& e : entries) {
    const std::string head = fmt::format("{} over {} ranks", to_string(static_cast<hw::ProfileCollectiveOp>(e.op)), e.ranks);
    if (e.interpolated + e.outside > 0) {
      std::string s = head + " interpolated (" + queries(e.interpolated + e.outside);
      if (e.outside > 0) {
        const collective::BusbwCurve* c = ct ? ct->find(e.op, e.ranks) : nullptr;
        s += fmt::format(", {} outside measured range {}, clamped to it", e.outside,
                         c ? format_bytes(c->min_bytes) + ".." + format_bytes(c->max_bytes) : std::string("?"));
      }
      comms.push_back(s + ")");
    }
    if (e.no_rows > 0) {
      comms.push_back(fmt::format("{} from the model ({}, no single-node rows of this op and size)", head,
                                  queries(e.no_rows)));
    }
    if (e.multi_domain > 0) {
      comms.push_back(fmt::format("{} from the model ({}, the group spans NVLink domains and the profile measures "
                                  "one node)",
                                  head, queries(e.multi_domain)));
    }
  }
  if (!comms.empty()) out.push_back(prefix + "collectives: " + join(comms, "; "));
  return out;
}

}  // namespace moesim::program
