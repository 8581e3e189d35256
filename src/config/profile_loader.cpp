// The strict calibration-profile loader (docs/profile.md). Sections are read in a fixed order —
// schema, provenance, then the tables in file order — so a file with several mistakes always reports
// the same one first.
#include "config/profile_loader.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "config/embedded_json.hpp"
#include "config/enum_field.hpp"
#include "config/hw_loader.hpp"
#include "config/profile_limits.hpp"
#include "core/embedded_files.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::config {
namespace lim = profile_limits;

namespace {

constexpr std::string_view kBuiltinDir = "calibrate/profiles/";
constexpr std::string_view kJsonSuffix = ".json";

const std::vector<std::string> kTables{"gemm", "grouped_gemm", "kernels", "attention", "collectives"};

constexpr std::string_view kNonemptyRule = "must not be empty (write \"unknown\" when it is not known)";

/// "YYYY-MM-DDTHH:MM:SS" with optional fraction, then "Z" or "+00:00" (UTC).
bool is_utc_iso8601(const std::string& s) {
  auto digits = [&](std::size_t from, std::size_t n) {
    if (from + n > s.size()) return false;
    for (std::size_t i = from; i < from + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
  };
  if (!(digits(0, 4) && s.size() > 19 && s[4] == '-' && digits(5, 2) && s[7] == '-' && digits(8, 2) && s[10] == 'T' &&
        digits(11, 2) && s[13] == ':' && digits(14, 2) && s[16] == ':' && digits(17, 2))) {
    return false;
  }
  std::size_t i = 19;
  if (s[i] == '.') {
    ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  const std::string_view zone = std::string_view(s).substr(i);
  return zone == "Z" || zone == "+00:00";
}

/// nccl-tests bus-bandwidth factor (src/*.cu BusBw): all-reduce 2(n−1)/n; all-gather, reduce-scatter,
/// all-to-all (n−1)/n; send/recv 1 (collective::busbw_factor, which config/ cannot include).
double bus_factor(hw::ProfileCollectiveOp op, std::int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case hw::ProfileCollectiveOp::kAllReduce: return 2.0 * (n - 1.0) / n;
    case hw::ProfileCollectiveOp::kAllGather:
    case hw::ProfileCollectiveOp::kReduceScatter:
    case hw::ProfileCollectiveOp::kAllToAll: return (n - 1.0) / n;
    case hw::ProfileCollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

/// What every row of every table shares: its reader, its path and whether the profile is measured.
struct RowContext {
  const hw::GpuSpec& gpu;
  bool measured = true;
};

hw::ProfileTiming read_timing(const ObjectReader& r, bool measured) {
  hw::ProfileTiming t;
  t.median_us = r.require_number("median_us", lim::kMicroseconds);
  // A published figure is one number: its spread and repeat count may be left out (0 and 1).
  t.spread_us = measured ? r.require_number("spread_us", lim::kSpread) : r.get_number("spread_us", 0.0, lim::kSpread);
  t.repeats = measured ? r.require_int("repeats", lim::kRepeats) : r.get_int("repeats", 1, lim::kRepeats);
  return t;
}

/// Required field `key`, of JSON type `type` (`type_name` in the message); `rule` says what it holds.
const Json& require_typed(const ObjectReader& r, std::string_view key, Json::value_t type, const char* type_name,
                          const std::string& rule) {
  const Json* v = r.get(key);
  if (!v) throw InputError(r.path_of(key), "", "required field is missing", rule);
  if (v->type() != type) {
    throw InputError(r.path_of(key), describe_value(*v), std::string("expected ") + type_name + ", got " + describe_type(*v),
                     rule);
  }
  return *v;
}

Precision read_precision(const ObjectReader& r, const hw::GpuSpec& gpu) {
  std::vector<std::string> names, supported;
  for (Precision q : hw::kProfilePrecisions) {
    names.emplace_back(to_string(q));
    if (gpu.supports(q)) supported.emplace_back(to_string(q));
  }
  const std::string name = r.require_enum("precision", names);
  const Precision p = *precision_from_string(name);
  if (!gpu.supports(p)) {
    throw InputError(r.path_of("precision"), json_quoted(name),
                     "GPU " + gpu.name + " (provenance.gpu) has no " + name + " tensor cores", join(supported));
  }
  return p;
}

hw::ProfileGemm read_gemm(const Json& v, const std::string& path, const RowContext& ctx) {
  const ObjectReader r(v, path,
                       {"precision", "m", "n", "k", "median_us", "spread_us", "repeats", "algorithm", "best_algorithm_us"});
  hw::ProfileGemm g;
  g.precision = read_precision(r, ctx.gpu);
  g.m = r.require_int("m", lim::kGemmDim);
  g.n = r.require_int("n", lim::kGemmDim);
  g.k = r.require_int("k", lim::kGemmDim);
  g.time = read_timing(r, ctx.measured);
  if (ctx.measured) {
    g.algorithm = r.require_nonempty_string("algorithm", kNonemptyRule);
    g.best_algorithm_us = r.require_number("best_algorithm_us", lim::kMicroseconds);
  } else {
    g.algorithm = r.get_string("algorithm", "unknown");
    g.best_algorithm_us = r.get_number("best_algorithm_us", g.time.median_us, lim::kMicroseconds);
  }
  return g;
}

hw::ProfileGroupedGemm read_grouped(const Json& v, const std::string& path, const RowContext& ctx) {
  const ObjectReader r(v, path, {"precision", "implementation", "tokens", "n", "k", "median_us", "spread_us", "repeats"});
  hw::ProfileGroupedGemm g;
  g.precision = read_precision(r, ctx.gpu);
  g.implementation = require_enum_value(r, "implementation", hw::kGroupedImplementationNames);
  const std::string tokens_path = r.path_of("tokens");
  const Json& tokens =
      require_typed(r, "tokens", Json::value_t::array, "an array", "an array of token counts, one per expert");
  if (tokens.empty() || static_cast<std::int64_t>(tokens.size()) > lim::kMaxExperts) {
    throw InputError(tokens_path, std::to_string(tokens.size()) + " entries", "one token count per expert",
                     "1 to " + std::to_string(lim::kMaxExperts) + " entries");
  }
  g.tokens.reserve(tokens.size());
  std::int64_t total = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    g.tokens.push_back(to_int(tokens[i], tokens_path + "/" + std::to_string(i), lim::kExpertTokens));
    total += g.tokens.back();
  }
  if (total <= 0) throw InputError(tokens_path, describe_value(tokens), "no expert has any token", "a total of at least 1 token");
  g.n = r.require_int("n", lim::kGemmDim);
  g.k = r.require_int("k", lim::kGemmDim);
  g.time = read_timing(r, ctx.measured);
  return g;
}

hw::ProfileKernel read_kernel(const Json& v, const std::string& path, const RowContext& ctx) {
  const ObjectReader r(v, path, {"kernel", "bytes", "shape", "median_us", "spread_us", "repeats"});
  hw::ProfileKernel k;
  k.kernel = require_enum_value(r, "kernel", hw::kMemoryKernelNames);
  k.bytes = r.require_int("bytes", lim::kBytes);
  const std::string shape_path = r.path_of("shape");
  const Json& shape = require_typed(r, "shape", Json::value_t::object, "an object",
                                    "an object of named sizes, e.g. {\"tokens\": 4096}");
  if (static_cast<std::int64_t>(shape.size()) > lim::kMaxShapeKeys) {
    throw InputError(shape_path, std::to_string(shape.size()) + " keys", "too many named sizes",
                     "at most " + std::to_string(lim::kMaxShapeKeys));
  }
  const ObjectReader sr(shape, shape_path, [&] {
    std::vector<std::string> keys;
    for (const auto& item : shape.items()) keys.push_back(item.key());
    return keys;
  }());
  for (const auto& item : shape.items()) {
    if (item.key().empty()) throw InputError(shape_path, "\"\"", "a size needs a name");
    k.shape.emplace_back(item.key(), to_int(item.value(), sr.path_of(item.key()), lim::kShapeValue));
  }
  std::sort(k.shape.begin(), k.shape.end());
  k.time = read_timing(r, ctx.measured);
  return k;
}

hw::ProfileAttention read_attention(const Json& v, const std::string& path, const RowContext& ctx) {
  const ObjectReader r(v, path,
                       {"implementation", "direction", "batch_heads", "seq", "head_dim", "causal", "median_us",
                        "spread_us", "repeats"});
  hw::ProfileAttention a;
  // Required, not defaulted: a flash and an unfused time correct different cost-model paths, and a
  // guess would silently apply one kernel's measurement to the other.
  a.implementation = require_enum_value(r, "implementation", hw::kAttentionImplementationNames);
  a.direction = require_enum_value(r, "direction", hw::kAttentionDirectionNames);
  a.batch_heads = r.require_int("batch_heads", lim::kBatchHeads);
  a.seq = r.require_int("seq", lim::kSeq);
  a.head_dim = r.require_int("head_dim", lim::kHeadDim);
  a.causal = r.require_bool("causal");
  a.time = read_timing(r, ctx.measured);
  return a;
}

hw::ProfileCollective read_collective(const Json& v, const std::string& path, const RowContext& ctx) {
  const ObjectReader r(v, path,
                       {"op", "ranks", "ranks_per_node", "bytes", "median_us", "spread_us", "repeats", "algbw_gbps",
                        "busbw_gbps"});
  hw::ProfileCollective c;
  c.op = require_enum_value(r, "op", hw::kProfileCollectiveOpNames);
  c.ranks = r.require_int("ranks", lim::kRanks);
  c.ranks_per_node = r.require_int("ranks_per_node", lim::kRanksPerNode);
  c.bytes = r.require_int("bytes", lim::kBytes);
  c.time = read_timing(r, ctx.measured);
  c.algbw_gbps = r.require_number("algbw_gbps", lim::kGBps);
  c.busbw_gbps = r.require_number("busbw_gbps", lim::kGBps);
  // nccl-tests: algbw = size / time, busbw = algbw × bus factor (GB = 1e9 B, time in µs).
  const double algbw = static_cast<double>(c.bytes) / (c.time.median_us * 1e3);
  const double busbw = c.algbw_gbps * bus_factor(c.op, c.ranks);
  auto close = [](double a, double b) { return std::abs(a - b) <= lim::kBandwidthTolerance * std::max(a, b); };
  if (!close(c.algbw_gbps, algbw)) {
    throw InputError(r.path_of("algbw_gbps"), format_number(c.algbw_gbps),
                     "algbw_gbps must equal bytes / median_us (nccl-tests algbw, GB = 1e9 B) within 5 %",
                     format_number(algbw));
  }
  if (!close(c.busbw_gbps, busbw)) {
    throw InputError(r.path_of("busbw_gbps"), format_number(c.busbw_gbps),
                     "busbw_gbps must equal algbw_gbps × the nccl-tests bus factor of " +
                         std::string(hw::to_string(c.op)) + " over " + std::to_string(c.ranks) + " ranks (" +
                         format_number(bus_factor(c.op, c.ranks)) + ") within 5 %",
                     format_number(busbw));
  }
  return c;
}

/// Reads one table: present, an array of at most kMaxRows rows, each read by `read_row`; a row whose
/// `key` equals an earlier row's is refused.
template <class Row, class Read, class Key>
std::vector<Row> read_table(const ObjectReader& top, const char* name, const RowContext& ctx, Read read_row, Key key,
                            const char* same_what) {
  const Json* v = top.get(name);
  const std::string path = top.path_of(name);
  if (!v) {
    throw InputError(path, "", "required field is missing: every table must be present (write [] for none)",
                     join(kTables));
  }
  if (!v->is_array()) throw InputError(path, describe_value(*v), "expected an array, got " + describe_type(*v));
  if (static_cast<std::int64_t>(v->size()) > lim::kMaxRows) {
    throw InputError(path, std::to_string(v->size()) + " rows", "too many rows",
                     "at most " + std::to_string(lim::kMaxRows));
  }
  std::vector<Row> rows;
  rows.reserve(v->size());
  std::map<decltype(key(std::declval<const Row&>())), std::size_t> seen;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const std::string row_path = path + "/" + std::to_string(i);
    rows.push_back(read_row((*v)[i], row_path, ctx));
    const auto [it, inserted] = seen.emplace(key(rows.back()), i);
    if (!inserted) {
      throw InputError(row_path, describe_value((*v)[i]),
                       std::string("duplicate of ") + path + "/" + std::to_string(it->second) + " (same " + same_what +
                           ")");
    }
  }
  return rows;
}

hw::ProfileProvenance read_provenance(const ObjectReader& top) {
  const Json* v = top.get("provenance");
  if (!v) throw InputError("/provenance", "", "required field is missing");
  const ObjectReader r(*v, "/provenance",
                       {"source", "gpu", "device_name", "sm_count", "sm_clock_mhz", "memory_clock_mhz", "gpus_visible",
                        "driver", "cuda_runtime", "cublas", "nccl", "date", "host", "command", "citations"});
  hw::ProfileProvenance p;
  p.source = require_enum_value(r, "source", hw::kProfileSourceNames);
  const bool measured = p.source == hw::ProfileSource::kMeasured;
  const std::vector<std::string> gpus = gpu_preset_names();
  p.gpu = r.require_enum("gpu", gpus);
  p.device_name = r.require_nonempty_string("device_name", kNonemptyRule);
  if (measured) {
    p.sm_count = r.require_int("sm_count", lim::kSmCount);
    p.sm_clock_mhz = r.require_number("sm_clock_mhz", lim::kClockMHz);
    p.memory_clock_mhz = r.require_number("memory_clock_mhz", lim::kClockMHz);
    p.gpus_visible = r.require_int("gpus_visible", lim::kGpusVisible);
  } else {
    p.sm_count = r.optional_int("sm_count", lim::kSmCount);
    p.sm_clock_mhz = r.optional_number("sm_clock_mhz", lim::kClockMHz);
    p.memory_clock_mhz = r.optional_number("memory_clock_mhz", lim::kClockMHz);
    p.gpus_visible = r.optional_int("gpus_visible", lim::kGpusVisible);
  }
  p.driver = r.require_nonempty_string("driver", kNonemptyRule);
  p.cuda_runtime = r.require_nonempty_string("cuda_runtime", kNonemptyRule);
  p.cublas = r.require_nonempty_string("cublas", kNonemptyRule);
  p.nccl = r.require_nonempty_string("nccl", kNonemptyRule);
  p.date = r.require_nonempty_string("date", kNonemptyRule);
  if (!is_utc_iso8601(p.date) && (measured || p.date != "unknown")) {
    throw InputError(r.path_of("date"), json_quoted(p.date), "expected a UTC ISO-8601 time",
                     measured ? "e.g. \"2025-06-01T12:00:00Z\"" : "e.g. \"2025-06-01T12:00:00Z\", or \"unknown\"");
  }
  p.host = r.require_nonempty_string("host", kNonemptyRule);
  p.command = r.require_nonempty_string("command", kNonemptyRule);
  const Json* c = r.get("citations");
  const std::string cpath = r.path_of("citations");
  if (!c) throw InputError(cpath, "", "required field is missing", "an array of strings ([] for a measured profile)");
  if (!c->is_array()) throw InputError(cpath, describe_value(*c), "expected an array, got " + describe_type(*c));
  if (static_cast<std::int64_t>(c->size()) > lim::kMaxCitations) {
    throw InputError(cpath, std::to_string(c->size()) + " entries", "too many citations",
                     "at most " + std::to_string(lim::kMaxCitations));
  }
  for (std::size_t i = 0; i < c->size(); ++i) {
    const Json& e = (*c)[i];
    const std::string epath = cpath + "/" + std::to_string(i);
    if (!e.is_string()) throw InputError(epath, describe_value(e), "expected a string, got " + describe_type(e));
    if (e.get<std::string>().empty()) throw InputError(epath, "\"\"", "a citation must not be empty");
    p.citations.push_back(e.get<std::string>());
  }
  if (!measured && p.citations.empty()) {
    throw InputError(cpath, "[]", "a published profile must cite where its figures come from",
                     "one citation or more");
  }
  return p;
}

}  // namespace

std::shared_ptr<hw::Profile> parse_profile(const Json& obj, const std::string& file) {
  try {
    // The schema first: a scenario or a result handed over by mistake is named as such, not as an
    // unknown key.
    if (obj.is_object()) {
      const auto it = obj.find("schema");
      if (it == obj.end()) throw InputError("/schema", "", "required field is missing", hw::kProfileSchema);
      if (!it->is_string() || it->get<std::string>() != hw::kProfileSchema) {
        throw InputError("/schema", describe_value(*it), "unsupported profile schema", hw::kProfileSchema);
      }
    }
    std::vector<std::string> keys = kTables;
    keys.emplace_back("schema");
    keys.emplace_back("provenance");
    const ObjectReader top(obj, "", keys);
    auto profile = std::make_shared<hw::Profile>();
    profile->file = file;
    profile->name = file;
    profile->provenance = read_provenance(top);
    const hw::GpuSpec gpu = load_gpu_preset(profile->provenance.gpu, "/provenance/gpu");
    const RowContext ctx{gpu, profile->provenance.source == hw::ProfileSource::kMeasured};
    profile->gemm = read_table<hw::ProfileGemm>(
        top, "gemm", ctx, read_gemm,
        [](const hw::ProfileGemm& g) { return std::tuple(static_cast<int>(g.precision), g.m, g.n, g.k); },
        "precision, m, n and k");
    profile->grouped_gemm = read_table<hw::ProfileGroupedGemm>(
        top, "grouped_gemm", ctx, read_grouped,
        [](const hw::ProfileGroupedGemm& g) {
          return std::tuple(static_cast<int>(g.precision), static_cast<int>(g.implementation), g.n, g.k, g.tokens);
        },
        "precision, implementation, tokens, n and k");
    profile->kernels = read_table<hw::ProfileKernel>(
        top, "kernels", ctx, read_kernel,
        [](const hw::ProfileKernel& k) { return std::tuple(static_cast<int>(k.kernel), k.shape); },
        "kernel and shape");
    profile->attention = read_table<hw::ProfileAttention>(
        top, "attention", ctx, read_attention,
        [](const hw::ProfileAttention& a) {
          return std::tuple(static_cast<int>(a.implementation), static_cast<int>(a.direction), a.batch_heads, a.seq,
                            a.head_dim, a.causal);
        },
        "implementation, direction, batch_heads, seq, head_dim and causal");
    profile->collectives = read_table<hw::ProfileCollective>(
        top, "collectives", ctx, read_collective,
        [](const hw::ProfileCollective& c) {
          return std::tuple(static_cast<int>(c.op), c.ranks, c.ranks_per_node, c.bytes);
        },
        "op, ranks, ranks_per_node and bytes");
    return profile;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

std::shared_ptr<hw::Profile> load_profile_file(const std::string& path) {
  return parse_profile(load_json_file(path), path);
}

std::vector<std::string> builtin_profile_names() { return embedded_json_names(kBuiltinDir); }

std::shared_ptr<hw::Profile> load_builtin_profile(const std::string& name) {
  const std::string path = std::string(kBuiltinDir) + name + std::string(kJsonSuffix);
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.path == path) {
      auto profile = parse_profile(parse_json_text(std::string(f.content), path), path);
      profile->name = name;
      return profile;
    }
  }
  return nullptr;
}

std::shared_ptr<const hw::Profile> resolve_profile(const std::string& written, const std::filesystem::path& base_dir,
                                                   const hw::GpuSpec& gpu, const std::string& json_path) {
  std::filesystem::path file(written);
  if (file.is_relative()) file = base_dir / file;
  file = file.lexically_normal();
  std::error_code ec;
  std::shared_ptr<hw::Profile> profile;
  if (!written.empty() && std::filesystem::is_regular_file(file, ec)) {
    profile = load_profile_file(file.string());
    profile->name = written;
  } else {
    const std::vector<std::string> names = builtin_profile_names();
    if (!written.empty() && std::binary_search(names.begin(), names.end(), written)) profile = load_builtin_profile(written);
    if (!profile) {
      throw InputError(json_path, json_quoted(written),
                       "no profile file " + file.string() + " and no checked-in profile of that name (calibrate/profiles/)",
                       "a profile file, or one of: " + join(names));
    }
  }
  if (profile->provenance.gpu != gpu.name) {
    std::vector<std::string> fitting;
    for (const std::string& n : builtin_profile_names()) {
      const auto p = load_builtin_profile(n);
      if (p && p->provenance.gpu == gpu.name) fitting.push_back(n);
    }
    throw InputError(json_path, json_quoted(written),
                     "profile " + profile->file + " was made on GPU " + profile->provenance.gpu +
                         " but the scenario's system uses " + gpu.name + "; a profile describes only its own GPU",
                     fitting.empty() ? "a profile made on " + gpu.name + " (none is checked in)" : join(fitting));
  }
  return profile;
}

}  // namespace moesim::config
