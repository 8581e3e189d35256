#include "calibrate/profile.hpp"

#include <nlohmann/json.hpp>

namespace moesim::calibrate {
namespace {

using Json = nlohmann::ordered_json;

void put_timing(Json& j, const Timing& t) {
  j["median_us"] = t.median_us;
  j["spread_us"] = t.spread_us;
  j["repeats"] = t.repeats;
}

Json provenance_json(const Provenance& p) {
  Json j;
  j["source"] = p.source;
  j["gpu"] = p.gpu;
  j["device_name"] = p.device_name;
  j["sm_count"] = p.sm_count;
  j["sm_clock_mhz"] = p.sm_clock_mhz;
  j["memory_clock_mhz"] = p.memory_clock_mhz;
  j["gpus_visible"] = p.gpus_visible;
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

}  // namespace

std::string profile_to_json(const Profile& profile) {
  Json root;
  root["schema"] = kProfileSchema;
  root["provenance"] = provenance_json(profile.provenance);
  Json& gemm = root["gemm"] = Json::array();
  for (const GemmRow& r : profile.gemm) {
    Json j;
    j["precision"] = r.precision;
    j["m"] = r.m;
    j["n"] = r.n;
    j["k"] = r.k;
    put_timing(j, r.timing);
    j["algorithm"] = r.algorithm;
    j["best_algorithm_us"] = r.best_algorithm_us;
    gemm.push_back(std::move(j));
  }
  Json& grouped = root["grouped_gemm"] = Json::array();
  for (const GroupedGemmRow& r : profile.grouped_gemm) {
    Json j;
    j["precision"] = r.precision;
    j["implementation"] = r.implementation;
    j["tokens"] = r.tokens;
    j["n"] = r.n;
    j["k"] = r.k;
    put_timing(j, r.timing);
    grouped.push_back(std::move(j));
  }
  Json& kernels = root["kernels"] = Json::array();
  for (const KernelRow& r : profile.kernels) {
    Json j;
    j["kernel"] = r.kernel;
    j["bytes"] = r.bytes;
    Json shape = Json::object();
    for (const auto& [key, value] : r.shape) shape[key] = value;
    j["shape"] = std::move(shape);
    put_timing(j, r.timing);
    kernels.push_back(std::move(j));
  }
  Json& attention = root["attention"] = Json::array();
  for (const AttentionRow& r : profile.attention) {
    Json j;
    j["implementation"] = r.implementation;
    j["direction"] = r.direction;
    j["batch_heads"] = r.batch_heads;
    j["seq"] = r.seq;
    j["head_dim"] = r.head_dim;
    j["causal"] = r.causal;
    put_timing(j, r.timing);
    attention.push_back(std::move(j));
  }
  Json& collectives = root["collectives"] = Json::array();
  for (const CollectiveRow& r : profile.collectives) {
    Json j;
    j["op"] = r.op;
    j["ranks"] = r.ranks;
    j["ranks_per_node"] = r.ranks_per_node;
    j["bytes"] = r.bytes;
    put_timing(j, r.timing);
    j["algbw_gbps"] = r.algbw_gbps;
    j["busbw_gbps"] = r.busbw_gbps;
    collectives.push_back(std::move(j));
  }
  return root.dump(2) + "\n";
}

}  // namespace moesim::calibrate
