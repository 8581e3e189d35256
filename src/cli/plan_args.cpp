#include "cli/plan_args.hpp"

#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::cli {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

std::int64_t parse_in_range(const ListField& field, const std::string& whole, const std::string& item,
                            const std::string& allowed) {
  long long v = 0;
  char extra = 0;
  if (std::sscanf(item.c_str(), "%lld%c", &v, &extra) != 1 || v < field.range.min || v > field.range.max) {
    throw InputError(field.flag, whole,
                     fmt::format("'{}' is not an integer from {} to {}", item, field.range.min, field.range.max), allowed);
  }
  return v;
}

}  // namespace

std::vector<std::int64_t> parse_int_list(const ListField& field, const std::string& text, bool ranges) {
  const std::string allowed = ranges ? "N, N1,N2,..., or FROM:TO (doubling from FROM up to TO)" : "N or N1,N2,...";
  std::vector<std::int64_t> out;
  if (ranges && text.find(':') != std::string::npos) {
    const auto parts = split(text, ':');
    if (parts.size() != 2) throw InputError(field.flag, text, "expected FROM:TO", allowed);
    const std::int64_t from = parse_in_range(field, text, parts[0], allowed);
    const std::int64_t to = parse_in_range(field, text, parts[1], allowed);
    if (to < from) throw InputError(field.flag, text, "FROM must not exceed TO", allowed);
    for (std::int64_t v = from; v <= to; v *= 2) out.push_back(v);
    return out;
  }
  for (const auto& item : split(text, ',')) out.push_back(parse_in_range(field, text, item, allowed));
  if (out.empty()) throw InputError(field.flag, text, "empty list", allowed);
  return out;
}

std::vector<Precision> parse_precisions(const std::string& text, const hw::GpuSpec& gpu) {
  std::vector<std::string> names;
  for (Precision p : kAllPrecisions) names.emplace_back(to_string(p));
  std::vector<Precision> out;
  if (text == "all") {
    for (Precision p : kAllPrecisions) {
      if (gpu.supports(p) && p != Precision::kFp16) out.push_back(p);
    }
    return out;
  }
  for (const auto& item : split(text, ',')) {
    const auto p = precision_from_string(item);
    if (!p) throw InputError("--precision", text, "unknown precision '" + item + "'", join(names) + ", or all");
    if (!gpu.supports(*p)) {
      // Searching it would reject every candidate and answer "no feasible layout" (exit 3): the
      // question itself is wrong, so it is refused as input.
      std::vector<std::string> supported;
      for (Precision q : kAllPrecisions) {
        if (gpu.supports(q) && q != Precision::kFp16) supported.emplace_back(to_string(q));
      }
      throw InputError("--precision", text, gpu.name + " does not support " + item, join(supported) + ", or all");
    }
    out.push_back(*p);
  }
  return out;
}

std::vector<RecomputeSpec> parse_recompute_list(const std::string& text) {
  const std::string allowed = join(names_of(kRecomputeGranularityNames)) + ", selective:MODULE+MODULE (" +
                              join(names_of(kRecomputeModuleNames)) + ")";
  std::vector<RecomputeSpec> out;
  for (const auto& item : split(text, ',')) {
    RecomputeSpec r;
    if (const auto granularity = value_of(kRecomputeGranularityNames, item)) {
      r.granularity = *granularity;
      // Megatron's default --recompute-modules is the attention core alone.
      if (r.granularity == RecomputeGranularity::kSelective) r.modules = {RecomputeModule::kCoreAttn};
    } else if (item.rfind("selective:", 0) == 0) {
      r.granularity = RecomputeGranularity::kSelective;
      for (const auto& m : split(item.substr(10), '+')) {
        const auto module = value_of(kRecomputeModuleNames, m);
        if (!module) throw InputError("--recompute", text, "unknown recompute module '" + m + "'", allowed);
        r.modules.push_back(*module);
      }
      if (r.modules.empty()) throw InputError("--recompute", text, "selective: needs at least one module", allowed);
    } else {
      throw InputError("--recompute", text, "unknown recompute option '" + item + "'", allowed);
    }
    out.push_back(r);
  }
  if (out.empty()) throw InputError("--recompute", text, "empty list", allowed);
  return out;
}

std::vector<Dispatcher> parse_dispatchers(const std::string& text) {
  const std::string allowed = join(names_of(kDispatcherNames));
  std::vector<Dispatcher> out;
  for (const auto& item : split(text, ',')) {
    const auto dispatcher = value_of(kDispatcherNames, item);
    if (!dispatcher) throw InputError("--dispatcher", text, "unknown dispatcher '" + item + "'", allowed);
    out.push_back(*dispatcher);
  }
  if (out.empty()) throw InputError("--dispatcher", text, "empty list", allowed);
  return out;
}

void parse_shard(const std::string& text, std::int64_t& shard, std::int64_t& shards) {
  long long i = 0, n = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lld/%lld%c", &i, &n, &extra) != 2 || n < 1 || n > 100000 || i < 0 || i >= n) {
    throw InputError("--shard", text, "expected i/N with 0 <= i < N <= 100000", "0/N … N-1/N");
  }
  shard = i;
  shards = n;
}

}  // namespace moesim::cli
