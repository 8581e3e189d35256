#include "report/calibration_request_json.hpp"

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string calibration_request_json_text(const hw::CalibrationRequest& request) {
  using Json = nlohmann::ordered_json;
  auto precision = [](Precision p) { return std::string(hw::profile_precision_name(p).value_or("bf16")); };
  Json gemm = Json::array(), grouped = Json::array(), attention = Json::array(), kernels = Json::array();
  for (const auto& g : request.gemm) {
    gemm.push_back({{"precision", precision(g.precision)}, {"m", g.m}, {"n", g.n}, {"k", g.k}});
  }
  for (const auto& g : request.grouped_gemm) {
    grouped.push_back({{"precision", precision(g.precision)}, {"tokens", g.tokens}, {"n", g.n}, {"k", g.k}});
  }
  for (const auto& a : request.attention) {
    attention.push_back(
        {{"batch_heads", a.batch_heads}, {"seq", a.seq}, {"head_dim", a.head_dim}, {"causal", a.causal}});
  }
  for (const auto& k : request.kernels) {
    kernels.push_back({{"kernel", std::string(hw::to_string(k.kernel))},
                       {"shape", {{"tokens", k.tokens}, {"hidden", k.hidden}, {"experts", k.experts}, {"topk", k.topk}}}});
  }
  const Json out{{"schema", hw::kCalibrationRequestSchema},
                 {"gemm", gemm},
                 {"grouped_gemm", grouped},
                 {"attention", attention},
                 {"kernels", kernels}};
  return out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
