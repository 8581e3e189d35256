#include "calibrate/request.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "hw/profile.hpp"

namespace moesim::calibrate {
namespace {

using Json = nlohmann::json;

// What this binary measures (hw/profile.hpp says why these bounds, and moesim's request writer keeps to them).
namespace lim = hw::calibration_limits;

std::string show(const Json& v) { return v.dump(); }

std::string join(std::initializer_list<const char*> names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

void only_keys(const Json& obj, const std::string& path, std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }) == allowed.end()) {
      throw InputError(path + "/" + key, "", "unknown key", join(allowed));
    }
  }
}

const Json& require(const Json& obj, const std::string& path, const char* key) {
  const auto it = obj.find(key);
  if (it == obj.end()) throw InputError(path + "/" + key, "", "missing required key");
  return *it;
}

const Json& object_at(const Json& v, const std::string& path) {
  if (!v.is_object()) throw InputError(path, show(v), "must be a JSON object");
  return v;
}

std::int64_t integer_in(const Json& v, const std::string& path, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) throw InputError(path, show(v), "must be an integer");
  const std::int64_t x = v.get<std::int64_t>();
  if (x < lo || x > hi) throw InputError(path, show(v), "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

std::string one_of(const Json& v, const std::string& path, std::initializer_list<const char*> allowed) {
  if (!v.is_string()) throw InputError(path, show(v), "must be a string", join(allowed));
  const std::string s = v.get<std::string>();
  if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return s == a; }) == allowed.end()) {
    throw InputError(path, show(v), "unknown value", join(allowed));
  }
  return s;
}

const Json& array_at(const Json& root, const char* key) {
  static const Json empty = Json::array();
  const auto it = root.find(key);
  if (it == root.end()) return empty;  // a table the request does not need
  if (!it->is_array()) throw InputError(std::string("/") + key, show(*it), "must be an array");
  return *it;
}

GemmRequest gemm_entry(const Json& e, const std::string& path) {
  object_at(e, path);
  only_keys(e, path, {"precision", "m", "n", "k"});
  GemmRequest g;
  g.precision = one_of(require(e, path, "precision"), path + "/precision", {"bf16", "fp8", "mxfp8", "nvfp4"});
  g.m = integer_in(require(e, path, "m"), path + "/m", 1, lim::kMaxDim);
  g.n = integer_in(require(e, path, "n"), path + "/n", 1, lim::kMaxDim);
  g.k = integer_in(require(e, path, "k"), path + "/k", 1, lim::kMaxDim);
  return g;
}

GroupedGemmRequest grouped_entry(const Json& e, const std::string& path) {
  object_at(e, path);
  only_keys(e, path, {"precision", "tokens", "n", "k"});
  GroupedGemmRequest g;
  g.precision = one_of(require(e, path, "precision"), path + "/precision", {"bf16"});
  const Json& tokens = require(e, path, "tokens");
  if (!tokens.is_array() || tokens.empty() || tokens.size() > static_cast<std::size_t>(lim::kMaxExperts)) {
    throw InputError(path + "/tokens", show(tokens), "must be an array of 1 to " + std::to_string(lim::kMaxExperts) + " token counts, one per local expert");
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    g.tokens.push_back(static_cast<int>(integer_in(tokens[i], path + "/tokens/" + std::to_string(i), 0, lim::kMaxDim)));
  }
  if (std::all_of(g.tokens.begin(), g.tokens.end(), [](int t) { return t == 0; })) {
    throw InputError(path + "/tokens", show(tokens), "at least one expert must have tokens");
  }
  g.n = integer_in(require(e, path, "n"), path + "/n", 1, lim::kMaxDim);
  g.k = integer_in(require(e, path, "k"), path + "/k", 1, lim::kMaxDim);
  return g;
}

AttentionRequest attention_entry(const Json& e, const std::string& path) {
  object_at(e, path);
  only_keys(e, path, {"batch_heads", "seq", "head_dim", "causal"});
  AttentionRequest a;
  a.batch_heads = static_cast<int>(integer_in(require(e, path, "batch_heads"), path + "/batch_heads", 1, lim::kMaxAttentionBatchHeads));
  a.seq = static_cast<int>(integer_in(require(e, path, "seq"), path + "/seq", 1, lim::kMaxAttentionSeq));
  a.head_dim = static_cast<int>(integer_in(require(e, path, "head_dim"), path + "/head_dim", 1, lim::kMaxAttentionHeadDim));
  const Json& causal = require(e, path, "causal");
  if (!causal.is_boolean()) throw InputError(path + "/causal", show(causal), "must be true or false");
  a.causal = causal.get<bool>();
  return a;
}

KernelRequest kernel_entry(const Json& e, const std::string& path) {
  object_at(e, path);
  only_keys(e, path, {"kernel", "shape"});
  KernelRequest k;
  k.kernel = one_of(require(e, path, "kernel"), path + "/kernel",
                    {"permute", "unpermute", "router_softmax_topk", "router_sigmoid_topk", "cast_fp8"});
  const std::string sp = path + "/shape";
  const Json& shape = object_at(require(e, path, "shape"), sp);
  only_keys(shape, sp, {"tokens", "hidden", "experts", "topk"});
  const bool router = k.kernel.rfind("router", 0) == 0;
  const bool permute = k.kernel == "permute" || k.kernel == "unpermute";
  k.tokens = static_cast<int>(integer_in(require(shape, sp, "tokens"), sp + "/tokens", 1, lim::kMaxDim));
  // Each kernel's own dimensions are required; the others may be present (the request writer
  // fills all four) and are range-checked but unused.
  const auto dim = [&](const char* key, bool needed, std::int64_t lo, std::int64_t hi) -> int {
    if (!needed && !shape.contains(key)) return 0;
    return static_cast<int>(integer_in(needed ? require(shape, sp, key) : shape.at(key), sp + "/" + key, needed ? lo : 0, hi));
  };
  k.hidden = dim("hidden", !router, 1, lim::kMaxDim);
  k.experts = dim("experts", router || permute, 1, router ? lim::kMaxRouterExperts : lim::kMaxPermuteExperts);
  k.topk = dim("topk", router || permute, 1, lim::kMaxRouterTopk);
  if ((permute || k.kernel == "cast_fp8") && k.hidden % 8 != 0) {
    throw InputError(sp + "/hidden", std::to_string(k.hidden), "must be a multiple of 8 (16-byte BF16 rows)");
  }
  if ((router || permute) && k.topk > k.experts) {
    throw InputError(sp + "/topk", std::to_string(k.topk), "must not exceed experts (" + std::to_string(k.experts) + ")");
  }
  return k;
}

Request parse_root(const Json& root) {
  if (!root.is_object()) throw InputError("", show(root).substr(0, 40), "the request must be a JSON object");
  only_keys(root, "", {"schema", "gemm", "grouped_gemm", "attention", "kernels"});
  const Json& schema = require(root, "", "schema");
  if (!schema.is_string() || schema.get<std::string>() != kRequestSchema) {
    throw InputError("/schema", show(schema), "unsupported schema", kRequestSchema);
  }
  Request r;
  const auto each = [&](const char* table, auto parse) {
    const Json& arr = array_at(root, table);
    for (std::size_t i = 0; i < arr.size(); ++i) parse(arr[i], std::string("/") + table + "/" + std::to_string(i));
  };
  each("gemm", [&](const Json& e, const std::string& p) { r.gemm.push_back(gemm_entry(e, p)); });
  each("grouped_gemm", [&](const Json& e, const std::string& p) { r.grouped_gemm.push_back(grouped_entry(e, p)); });
  each("attention", [&](const Json& e, const std::string& p) { r.attention.push_back(attention_entry(e, p)); });
  each("kernels", [&](const Json& e, const std::string& p) { r.kernels.push_back(kernel_entry(e, p)); });
  return r;
}

}  // namespace

Request parse_request(std::string_view text, const std::string& file) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw InputError("", "", std::string("not valid JSON: ") + e.what()).in_file(file);
  }
  try {
    return parse_root(root);
  } catch (InputError& e) {
    e.in_file(file);
    throw;
  }
}

Request load_request(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_text_file(path);
  } catch (InputError& e) {
    e.in_file(path.string());
    throw;
  }
  return parse_request(text, path.string());
}

}  // namespace moesim::calibrate
