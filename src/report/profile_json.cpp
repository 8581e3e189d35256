#include "report/profile_json.hpp"

#include <cmath>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace moesim::report {
namespace {

using Json = nlohmann::ordered_json;

void put_timing(Json& j, const hw::ProfileTiming& t) {
  j["median_us"] = t.median_us;
  j["spread_us"] = t.spread_us;
  j["repeats"] = t.repeats;
}

/// A clock the driver reports in whole MHz is written as an integer ("1980", not "1980.0"), as the
/// calibrator has always written it; a fractional one keeps its fraction.
Json clock_value(double mhz) {
  if (std::floor(mhz) == mhz && std::abs(mhz) < 1e15) return static_cast<std::int64_t>(mhz);
  return mhz;
}

Json provenance_json(const hw::ProfileProvenance& p) {
  Json j;
  j["source"] = std::string(hw::to_string(p.source));
  j["gpu"] = p.gpu;
  j["device_name"] = p.device_name;
  if (p.sm_count) j["sm_count"] = *p.sm_count;
  if (p.sm_clock_mhz) j["sm_clock_mhz"] = clock_value(*p.sm_clock_mhz);
  if (p.memory_clock_mhz) j["memory_clock_mhz"] = clock_value(*p.memory_clock_mhz);
  if (p.gpus_visible) j["gpus_visible"] = *p.gpus_visible;
  j["driver"] = p.driver;
  j["cuda_runtime"] = p.cuda_runtime;
  j["cublas"] = p.cublas;
  j["nccl"] = p.nccl;
  j["date"] = p.date;
  j["host"] = p.host;
  j["command"] = p.command;
  j["citations"] = p.citations;
  return j;
}

std::string precision_name(Precision p) { return std::string(hw::profile_precision_name(p).value_or(to_string(p))); }

}  // namespace

std::string profile_to_json_text(const hw::Profile& profile) {
  Json root;
  root["schema"] = hw::kProfileSchema;
  root["provenance"] = provenance_json(profile.provenance);
  Json& gemm = root["gemm"] = Json::array();
  for (const hw::ProfileGemm& r : profile.gemm) {
    Json j;
    j["precision"] = precision_name(r.precision);
    j["m"] = r.m;
    j["n"] = r.n;
    j["k"] = r.k;
    put_timing(j, r.time);
    j["algorithm"] = r.algorithm;
    j["best_algorithm_us"] = r.best_algorithm_us;
    gemm.push_back(std::move(j));
  }
  Json& grouped = root["grouped_gemm"] = Json::array();
  for (const hw::ProfileGroupedGemm& r : profile.grouped_gemm) {
    Json j;
    j["precision"] = precision_name(r.precision);
    j["implementation"] = std::string(hw::to_string(r.implementation));
    j["tokens"] = r.tokens;
    j["n"] = r.n;
    j["k"] = r.k;
    put_timing(j, r.time);
    grouped.push_back(std::move(j));
  }
  Json& kernels = root["kernels"] = Json::array();
  for (const hw::ProfileKernel& r : profile.kernels) {
    Json j;
    j["kernel"] = std::string(hw::to_string(r.kernel));
    j["bytes"] = r.bytes;
    Json shape = Json::object();
    for (const auto& [key, value] : r.shape) shape[key] = value;
    j["shape"] = std::move(shape);
    put_timing(j, r.time);
    kernels.push_back(std::move(j));
  }
  Json& attention = root["attention"] = Json::array();
  for (const hw::ProfileAttention& r : profile.attention) {
    Json j;
    j["implementation"] = std::string(hw::to_string(r.implementation));
    j["direction"] = std::string(hw::to_string(r.direction));
    j["batch_heads"] = r.batch_heads;
    j["seq"] = r.seq;
    j["head_dim"] = r.head_dim;
    j["causal"] = r.causal;
    put_timing(j, r.time);
    attention.push_back(std::move(j));
  }
  Json& collectives = root["collectives"] = Json::array();
  for (const hw::ProfileCollective& r : profile.collectives) {
    Json j;
    j["op"] = std::string(hw::to_string(r.op));
    j["ranks"] = r.ranks;
    j["ranks_per_node"] = r.ranks_per_node;
    j["bytes"] = r.bytes;
    put_timing(j, r.time);
    j["algbw_gbps"] = r.algbw_gbps;
    j["busbw_gbps"] = r.busbw_gbps;
    collectives.push_back(std::move(j));
  }
  return root.dump(2) + "\n";
}

}  // namespace moesim::report
