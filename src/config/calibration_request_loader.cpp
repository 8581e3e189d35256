#include "config/calibration_request_loader.hpp"

#include <algorithm>
#include <vector>

#include "config/profile_limits.hpp"
#include "core/error.hpp"

namespace moesim::config {
namespace {

namespace lim = hw::calibration_limits;

const std::vector<std::string> kTables{"gemm", "grouped_gemm", "attention", "kernels"};
constexpr IntRange kDim{1, lim::kMaxDim};

/// The kernels a request may ask for: every memory-bound kernel but the copy, which the calibrator
/// always measures on its own grid.
bool requestable(hw::MemoryKernel k) { return k != hw::MemoryKernel::kCopy; }

Precision read_precision(const ObjectReader& r, const std::vector<Precision>& allowed) {
  std::vector<std::string> names;
  for (Precision p : allowed) names.emplace_back(*hw::profile_precision_name(p));
  return *precision_from_string(r.require_enum("precision", names));
}

hw::CalibrationRequest::Gemm read_gemm(const Json& v, const std::string& path) {
  const ObjectReader r(v, path, {"precision", "m", "n", "k"});
  hw::CalibrationRequest::Gemm g;
  g.precision = read_precision(r, {lim::kGemmPrecisions.begin(), lim::kGemmPrecisions.end()});
  g.m = r.require_int("m", kDim);
  g.n = r.require_int("n", kDim);
  g.k = r.require_int("k", kDim);
  return g;
}

hw::CalibrationRequest::Grouped read_grouped(const Json& v, const std::string& path) {
  const ObjectReader r(v, path, {"precision", "tokens", "n", "k"});
  hw::CalibrationRequest::Grouped g;
  g.precision = read_precision(r, {lim::kGroupedGemmPrecision});
  const std::string tokens_path = r.path_of("tokens");
  const Json* tokens = r.get("tokens");
  if (!tokens) throw InputError(tokens_path, "", "required field is missing", "an array of token counts, one per local expert");
  if (!tokens->is_array()) throw InputError(tokens_path, describe_value(*tokens), "expected an array, got " + describe_type(*tokens));
  if (tokens->empty() || static_cast<std::int64_t>(tokens->size()) > lim::kMaxExperts) {
    throw InputError(tokens_path, std::to_string(tokens->size()) + " entries", "one token count per local expert",
                     "1 to " + std::to_string(lim::kMaxExperts) + " entries");
  }
  for (std::size_t i = 0; i < tokens->size(); ++i) {
    g.tokens.push_back(to_int((*tokens)[i], tokens_path + "/" + std::to_string(i), {0, lim::kMaxDim}));
  }
  if (std::all_of(g.tokens.begin(), g.tokens.end(), [](std::int64_t t) { return t == 0; })) {
    throw InputError(tokens_path, describe_value(*tokens), "no expert has any token", "a total of at least 1 token");
  }
  g.n = r.require_int("n", kDim);
  g.k = r.require_int("k", kDim);
  return g;
}

hw::CalibrationRequest::Attention read_attention(const Json& v, const std::string& path) {
  const ObjectReader r(v, path, {"batch_heads", "seq", "head_dim", "causal"});
  hw::CalibrationRequest::Attention a;
  a.batch_heads = r.require_int("batch_heads", {1, lim::kMaxAttentionBatchHeads});
  a.seq = r.require_int("seq", {1, lim::kMaxAttentionSeq});
  a.head_dim = r.require_int("head_dim", {1, lim::kMaxAttentionHeadDim});
  a.causal = r.require_bool("causal");
  return a;
}

hw::CalibrationRequest::Kernel read_kernel(const Json& v, const std::string& path) {
  const ObjectReader r(v, path, {"kernel", "shape"});
  hw::CalibrationRequest::Kernel k;
  std::vector<std::string> names;
  for (const auto& [kernel, name] : hw::kMemoryKernelNames) {
    if (requestable(kernel)) names.emplace_back(name);
  }
  k.kernel = *value_of(hw::kMemoryKernelNames, r.require_enum("kernel", names));
  const Json* shape = r.get("shape");
  if (!shape) throw InputError(r.path_of("shape"), "", "required field is missing", "an object of tokens, hidden, experts, topk");
  const ObjectReader sr(*shape, r.path_of("shape"), {"tokens", "hidden", "experts", "topk"});
  const bool router = k.kernel == hw::MemoryKernel::kRouterSoftmaxTopk || k.kernel == hw::MemoryKernel::kRouterSigmoidTopk;
  const bool permute = k.kernel == hw::MemoryKernel::kPermute || k.kernel == hw::MemoryKernel::kUnpermute;
  // Each kernel's own sizes are required; the others may be present (report/calibration_request_json
  // writes all four) and are range-checked, then read as 0: the kernel does not take them.
  const auto size = [&](const char* key, bool needed, std::int64_t max) -> std::int64_t {
    if (needed) return sr.require_int(key, {1, max});
    (void)sr.get_int(key, 0, {0, max});
    return 0;
  };
  k.tokens = size("tokens", true, lim::kMaxDim);
  k.hidden = size("hidden", !router, lim::kMaxDim);
  k.experts = size("experts", router || permute, router ? lim::kMaxRouterExperts : lim::kMaxPermuteExperts);
  k.topk = size("topk", router || permute, lim::kMaxRouterTopk);
  if ((permute || k.kernel == hw::MemoryKernel::kCastFp8) && k.hidden % 8 != 0) {
    throw InputError(sr.path_of("hidden"), std::to_string(k.hidden), "must be a multiple of 8 (16-byte BF16 rows)");
  }
  if ((router || permute) && k.topk > k.experts) {
    throw InputError(sr.path_of("topk"), std::to_string(k.topk), "must not exceed experts", std::to_string(k.experts) + " or fewer");
  }
  return k;
}

/// Table `name`: absent (the request needs none of it) or an array of at most kMaxRows entries.
template <class Read>
void read_table(const ObjectReader& top, const char* name, Read read_row) {
  const Json* v = top.get(name);
  if (!v) return;
  const std::string path = top.path_of(name);
  if (!v->is_array()) throw InputError(path, describe_value(*v), "expected an array, got " + describe_type(*v));
  if (static_cast<std::int64_t>(v->size()) > profile_limits::kMaxRows) {
    throw InputError(path, std::to_string(v->size()) + " rows", "too many rows", "at most " + std::to_string(profile_limits::kMaxRows));
  }
  for (std::size_t i = 0; i < v->size(); ++i) read_row((*v)[i], path + "/" + std::to_string(i));
}

}  // namespace

hw::CalibrationRequest parse_calibration_request(const Json& obj, const std::string& file) {
  try {
    // The schema first: a profile or a scenario handed over by mistake is named as such.
    if (obj.is_object()) {
      const auto it = obj.find("schema");
      if (it == obj.end()) throw InputError("/schema", "", "required field is missing", hw::kCalibrationRequestSchema);
      if (!it->is_string() || it->get<std::string>() != hw::kCalibrationRequestSchema) {
        throw InputError("/schema", describe_value(*it), "unsupported calibration request schema", hw::kCalibrationRequestSchema);
      }
    }
    std::vector<std::string> keys = kTables;
    keys.emplace_back("schema");
    const ObjectReader top(obj, "", keys);
    hw::CalibrationRequest r;
    read_table(top, "gemm", [&](const Json& v, const std::string& p) { r.gemm.push_back(read_gemm(v, p)); });
    read_table(top, "grouped_gemm", [&](const Json& v, const std::string& p) { r.grouped_gemm.push_back(read_grouped(v, p)); });
    read_table(top, "attention", [&](const Json& v, const std::string& p) { r.attention.push_back(read_attention(v, p)); });
    read_table(top, "kernels", [&](const Json& v, const std::string& p) { r.kernels.push_back(read_kernel(v, p)); });
    return r;
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

hw::CalibrationRequest load_calibration_request(const std::string& path) {
  return parse_calibration_request(load_json_file(path), path);
}

}  // namespace moesim::config
