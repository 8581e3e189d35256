// moesim-calibrate's host side, without a GPU: the request loader's refusals (file, JSON path, rule),
// the profile's JSON (schema, every table present), the sweep plan, the GPU preset names and the
// efficiency summary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/gpu_preset.hpp"
#include "calibrate/profile.hpp"
#include "calibrate/request.hpp"
#include "calibrate/summary.hpp"
#include "calibrate/sweep_plan.hpp"
#include "core/error.hpp"

using namespace moesim::calibrate;

namespace {

const char* kGood = R"({"schema": "moesim.calibration-request/1",
  "gemm": [{"precision": "bf16", "m": 4096, "n": 7168, "k": 2048}, {"precision": "fp8", "m": 16, "n": 32, "k": 64}],
  "grouped_gemm": [{"precision": "bf16", "tokens": [100, 0, 28], "n": 4096, "k": 7168}],
  "attention": [{"batch_heads": 8, "seq": 4096, "head_dim": 192, "causal": true}],
  "kernels": [{"kernel": "permute", "shape": {"tokens": 8192, "hidden": 7168, "experts": 256, "topk": 8}},
              {"kernel": "router_sigmoid_topk", "shape": {"tokens": 8192, "hidden": 7168, "experts": 256, "topk": 8}},
              {"kernel": "cast_fp8", "shape": {"tokens": 8192, "hidden": 7168}}]})";

std::string refusal(const std::string& text) {
  try {
    (void)parse_request(text, "req.json");
  } catch (const moesim::InputError& e) {
    return e.what();
  }
  return "accepted";
}

std::string with(const std::string& table_json) { return R"({"schema": "moesim.calibration-request/1", )" + table_json + "}"; }

}  // namespace

TEST_CASE("request: a well-formed file is read in full") {
  const Request r = parse_request(kGood, "req.json");
  REQUIRE(r.gemm.size() == 2);
  CHECK(r.gemm[0].precision == "bf16");
  CHECK(r.gemm[0].k == 2048);
  REQUIRE(r.grouped_gemm.size() == 1);
  CHECK(r.grouped_gemm[0].tokens == std::vector<int>{100, 0, 28});
  REQUIRE(r.attention.size() == 1);
  CHECK(r.attention[0].head_dim == 192);
  CHECK(r.attention[0].causal);
  REQUIRE(r.kernels.size() == 3);
  CHECK(r.kernels[0].experts == 256);
  CHECK(r.kernels[2].kernel == "cast_fp8");
  CHECK(r.kernels[2].topk == 0);
  CHECK(parse_request(R"({"schema": "moesim.calibration-request/1"})", "x").gemm.empty());  // tables may be absent
}

TEST_CASE("request: refusals name the file, the JSON path and the rule") {
  CHECK(refusal("{") .rfind("req.json: at /: not valid JSON", 0) == 0);
  CHECK(refusal("[1]") == "req.json: at /: value [1]: the request must be a JSON object");
  CHECK(refusal(R"({"schema": "moesim.profile/1"})") ==
        "req.json: at /schema: value \"moesim.profile/1\": unsupported schema; allowed: moesim.calibration-request/1");
  CHECK(refusal(R"({"gemm": []})") == "req.json: at /schema: missing required key");
  CHECK(refusal(with(R"("gemms": [])")) == "req.json: at /gemms: unknown key; allowed: schema, gemm, grouped_gemm, attention, kernels");
  CHECK(refusal(with(R"("gemm": {})")) == "req.json: at /gemm: value {}: must be an array");
  CHECK(refusal(with(R"("gemm": [{"precision": "fp16", "m": 1, "n": 1, "k": 1}])")) ==
        "req.json: at /gemm/0/precision: value \"fp16\": unknown value; allowed: bf16, fp8, mxfp8, nvfp4");
  CHECK(refusal(with(R"("gemm": [{"precision": "bf16", "m": -4, "n": 1, "k": 1}])")) == "req.json: at /gemm/0/m: value -4: must be in [1, 1048576]");
  CHECK(refusal(with(R"("gemm": [{"precision": "bf16", "m": 4.5, "n": 1, "k": 1}])")) == "req.json: at /gemm/0/m: value 4.5: must be an integer");
  CHECK(refusal(with(R"("gemm": [{"precision": "bf16", "m": 4, "n": 1}])")) == "req.json: at /gemm/0/k: missing required key");
  CHECK(refusal(with(R"("gemm": [{"precision": "bf16", "m": 4, "n": 1, "k": 1, "alpha": 2}])")) ==
        "req.json: at /gemm/0/alpha: unknown key; allowed: precision, m, n, k");
  CHECK(refusal(with(R"("grouped_gemm": [{"precision": "bf16", "tokens": [0, 0], "n": 8, "k": 8}])")) ==
        "req.json: at /grouped_gemm/0/tokens: value [0,0]: at least one expert must have tokens");
  CHECK(refusal(with(R"("grouped_gemm": [{"precision": "fp8", "tokens": [1], "n": 8, "k": 8}])")) ==
        "req.json: at /grouped_gemm/0/precision: value \"fp8\": unknown value; allowed: bf16");
  CHECK(refusal(with(R"("grouped_gemm": [{"precision": "bf16", "tokens": [3, -1], "n": 8, "k": 8}])")) ==
        "req.json: at /grouped_gemm/0/tokens/1: value -1: must be in [0, 1048576]");
  CHECK(refusal(with(R"("attention": [{"batch_heads": 8, "seq": 4096, "head_dim": 128, "causal": 1}])")) ==
        "req.json: at /attention/0/causal: value 1: must be true or false");
  CHECK(refusal(with(R"("kernels": [{"kernel": "permute", "shape": {"tokens": 8, "experts": 8, "topk": 2}}])")) ==
        "req.json: at /kernels/0/shape/hidden: missing required key");
  CHECK(refusal(with(R"("kernels": [{"kernel": "permute", "shape": {"tokens": 8, "hidden": 100, "experts": 8, "topk": 2}}])")) ==
        "req.json: at /kernels/0/shape/hidden: value 100: must be a multiple of 8 (16-byte BF16 rows)");
  CHECK(refusal(with(R"("kernels": [{"kernel": "router_softmax_topk", "shape": {"tokens": 8, "experts": 4, "topk": 8}}])")) ==
        "req.json: at /kernels/0/shape/topk: value 8: must not exceed experts (4)");
  CHECK(refusal(with(R"("kernels": [{"kernel": "router_softmax_topk", "shape": {"tokens": 8, "experts": 1024, "topk": 8}}])")) ==
        "req.json: at /kernels/0/shape/experts: value 1024: must be in [1, 512]");
  CHECK(refusal(with(R"("kernels": [{"kernel": "cast_fp8", "shape": {"tokens": 8, "hidden": 64, "rows": 2}}])")) ==
        "req.json: at /kernels/0/shape/rows: unknown key; allowed: tokens, hidden, experts, topk");
  CHECK(refusal(with(R"("kernels": [{"kernel": "norm", "shape": {"tokens": 8}}])")) ==
        "req.json: at /kernels/0/kernel: value \"norm\": unknown value; allowed: permute, unpermute, router_softmax_topk, router_sigmoid_topk, cast_fp8");
}

TEST_CASE("request: an unreadable file is refused with its name") {
  try {
    (void)load_request("/nonexistent/req.json");
    FAIL("accepted");
  } catch (const moesim::InputError& e) {
    CHECK(std::string(e.what()).find("/nonexistent/req.json") != std::string::npos);
  }
}

TEST_CASE("profile: the schema's fields in order, every table present even when empty") {
  Profile p;
  p.provenance.gpu = "h200-sxm";
  p.provenance.device_name = "NVIDIA H200";
  p.provenance.citations = {};
  auto j = nlohmann::ordered_json::parse(profile_to_json(p));
  CHECK(j["schema"] == "moesim.profile/1");
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema", "provenance", "gemm", "grouped_gemm", "kernels", "attention", "collectives"});
  for (const char* table : {"gemm", "grouped_gemm", "kernels", "attention", "collectives"}) CHECK(j[table].is_array());
  CHECK(j["provenance"]["source"] == "measured");
  CHECK(j["provenance"]["citations"].is_array());

  p.gemm.push_back(GemmRow{"fp8", 1, 2, 3, Timing{10.5, 0.25, 20}, "heuristic#0", 9.75});
  p.grouped_gemm.push_back(GroupedGemmRow{"bf16", "loop", {3, 0, 5}, 64, 32, Timing{7, 1, 10}});
  p.kernels.push_back(KernelRow{"permute", 4096, {{"tokens", 8}, {"hidden", 128}}, Timing{2, 0.5, 20}});
  p.attention.push_back(AttentionRow{"unfused", "backward", 4, 512, 64, false, Timing{100, 3, 20}});
  p.collectives.push_back(CollectiveRow{"all_reduce", 8, 8, 1024, Timing{20, 1, 20}, 0.0512, 0.0896});
  j = nlohmann::ordered_json::parse(profile_to_json(p));
  CHECK(j["gemm"][0]["best_algorithm_us"] == 9.75);
  CHECK(j["gemm"][0]["algorithm"] == "heuristic#0");
  CHECK(j["grouped_gemm"][0]["tokens"] == nlohmann::json::array({3, 0, 5}));
  CHECK(j["kernels"][0]["shape"]["hidden"] == 128);
  CHECK(j["attention"][0]["causal"] == false);
  CHECK(j["attention"][0]["implementation"] == "unfused");
  CHECK(j["collectives"][0]["ranks_per_node"] == 8);
  CHECK(j["collectives"][0]["spread_us"] == 1.0);
}

TEST_CASE("gpu presets from device names") {
  CHECK(gpu_preset_for("NVIDIA H200") == "h200-sxm");
  CHECK(gpu_preset_for("NVIDIA H200 NVL") == "NVIDIA H200 NVL");
  CHECK(gpu_preset_for("NVIDIA H100 80GB HBM3") == "h100-sxm");
  CHECK(gpu_preset_for("NVIDIA H100 PCIe") == "NVIDIA H100 PCIe");
  CHECK(gpu_preset_for("NVIDIA A100-SXM4-80GB") == "a100-sxm-80g");
  CHECK(gpu_preset_for("NVIDIA A100-SXM4-40GB") == "NVIDIA A100-SXM4-40GB");
  CHECK(gpu_preset_for("NVIDIA B200") == "b200");
  CHECK(gpu_preset_for("NVIDIA GB200") == "gb200");
  CHECK(gpu_preset_for("NVIDIA H800") == "h800-sxm");
  CHECK(gpu_preset_for("Tesla T4") == "Tesla T4");
}

TEST_CASE("sweep plan: loads, grid, request shapes without duplicates") {
  const auto balanced = expert_loads(64, 16384, false);
  CHECK(std::accumulate(balanced.begin(), balanced.end(), 0) == 16384);
  CHECK(balanced.front() == 256);
  CHECK(balanced.back() == 256);
  const auto skewed = expert_loads(64, 16384, true);
  CHECK(std::accumulate(skewed.begin(), skewed.end(), 0) == 16384);
  CHECK(skewed.front() > 10 * skewed.back());

  const SweepPlan full = make_sweep_plan(Request{}, false);
  const SweepPlan quick = make_sweep_plan(Request{}, true);
  CHECK(quick.gemm.size() < full.gemm.size());
  CHECK(quick.repeats.repeats == 10);
  CHECK(full.repeats.repeats == 20);
  CHECK(full.copy_bytes.front() == std::size_t{1} << 20);
  CHECK(full.copy_bytes.back() == std::size_t{1} << 30);
  CHECK(full.copy_bytes.size() == 11);
  CHECK(quick.copy_bytes.size() == 6);
  CHECK(full.collective_bytes.front() == 1024);
  CHECK(full.collective_bytes.back() == std::size_t{1} << 30);
  CHECK(quick.collective_bytes.size() == 11);
  CHECK(full.grouped.size() == 12);  // 3 expert counts x 2 loads x 2 shapes
  CHECK(full.attention.size() == 3);

  const Request r = parse_request(kGood, "req.json");
  const SweepPlan with_request = make_sweep_plan(r, true);
  CHECK(with_request.gemm.size() == quick.gemm.size() + 2);
  CHECK(with_request.grouped.size() == quick.grouped.size() + 1);
  CHECK(with_request.attention.size() == quick.attention.size() + 1);
  CHECK(with_request.kernels.size() == quick.kernels.size() + 3);
  const SweepPlan twice = make_sweep_plan(Request{r.gemm, {}, {}, {}}, true);
  Request doubled = r;
  doubled.gemm.insert(doubled.gemm.end(), r.gemm.begin(), r.gemm.end());
  CHECK(make_sweep_plan(doubled, true).gemm.size() == twice.gemm.size());
}

TEST_CASE("efficiency summary: ratios against the copy and the best GEMM algorithm") {
  Profile p;
  p.kernels.push_back(KernelRow{"copy", 2000000000, {{"bytes", 1000000000}}, Timing{500, 1, 10}});  // 4000 GB/s
  p.kernels.push_back(KernelRow{"permute", 1000000000, {{"tokens", 1}}, Timing{300, 1, 10}});      // 3333 GB/s
  p.kernels.push_back(KernelRow{"router_softmax_topk", 100000000, {{"tokens", 1}}, Timing{100, 1, 10}});  // 1000 GB/s
  p.gemm.push_back(GemmRow{"bf16", 8, 8, 8, Timing{100, 1, 10}, "heuristic#0", 95});
  p.gemm.push_back(GemmRow{"bf16", 16, 16, 16, Timing{100, 1, 10}, "heuristic#0", 80});
  const Efficiency e = efficiency_summary(p);
  CHECK(e.copy_gbps == doctest::Approx(4000));
  CHECK(*e.permute_pct == doctest::Approx(83.33).epsilon(1e-3));
  CHECK(*e.router_pct == doctest::Approx(25));
  CHECK(*e.gemm_bf16_min_pct == doctest::Approx(80));
  CHECK_FALSE(e.unpermute_pct.has_value());
  CHECK_FALSE(e.meets_targets());
  bool mentions_below = false;
  for (const auto& line : e.lines) mentions_below |= line.find("BELOW") != std::string::npos;
  CHECK(mentions_below);
}
