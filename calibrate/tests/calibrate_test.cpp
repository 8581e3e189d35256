// moesim-calibrate's host side, without a GPU: the sweep plan (with a request read by config's loader),
// the GPU preset names and the efficiency summary. The request's loader and the profile's writer are
// src/config's and src/report's (tests/config/calibration_request_loader_test.cpp,
// tests/report/profile_json_test.cpp).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <numeric>
#include <string>

#include "calibrate/gpu_preset.hpp"
#include "calibrate/summary.hpp"
#include "calibrate/sweep_plan.hpp"
#include "config/calibration_request_loader.hpp"

using namespace moesim::calibrate;
namespace hw = moesim::hw;

namespace {

const char* kGood = R"({"schema": "moesim.calibration-request/1",
  "gemm": [{"precision": "bf16", "m": 4096, "n": 7168, "k": 2048}, {"precision": "fp8", "m": 16, "n": 32, "k": 64}],
  "grouped_gemm": [{"precision": "bf16", "tokens": [100, 0, 28], "n": 4096, "k": 7168}],
  "attention": [{"batch_heads": 8, "seq": 4096, "head_dim": 192, "causal": true}],
  "kernels": [{"kernel": "permute", "shape": {"tokens": 8192, "hidden": 7168, "experts": 256, "topk": 8}},
              {"kernel": "router_sigmoid_topk", "shape": {"tokens": 8192, "hidden": 7168, "experts": 256, "topk": 8}},
              {"kernel": "cast_fp8", "shape": {"tokens": 8192, "hidden": 7168}}]})";

hw::CalibrationRequest good_request() {
  return moesim::config::parse_calibration_request(moesim::config::Json::parse(kGood), "req.json");
}

}  // namespace

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

  const SweepPlan full = make_sweep_plan(hw::CalibrationRequest{}, false);
  const SweepPlan quick = make_sweep_plan(hw::CalibrationRequest{}, true);
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

  const hw::CalibrationRequest r = good_request();
  const SweepPlan with_request = make_sweep_plan(r, true);
  CHECK(with_request.gemm.size() == quick.gemm.size() + 2);
  CHECK(with_request.grouped.size() == quick.grouped.size() + 1);
  CHECK(with_request.attention.size() == quick.attention.size() + 1);
  CHECK(with_request.kernels.size() == quick.kernels.size() + 3);
  const SweepPlan twice = make_sweep_plan(hw::CalibrationRequest{r.gemm, {}, {}, {}}, true);
  hw::CalibrationRequest doubled = r;
  doubled.gemm.insert(doubled.gemm.end(), r.gemm.begin(), r.gemm.end());
  CHECK(make_sweep_plan(doubled, true).gemm.size() == twice.gemm.size());
  // The request's shapes as tasks: the router takes no hidden size, the cast no experts or top-k.
  const auto& last = with_request.kernels.back();
  CHECK(last.kernel == hw::MemoryKernel::kCastFp8);
  CHECK(last.hidden == 7168);
  CHECK(last.experts == 0);
  CHECK(with_request.grouped.back().tokens == std::vector<int>{100, 0, 28});
  CHECK(with_request.grouped.back().load == "requested");
}

TEST_CASE("efficiency summary: ratios against the copy and the best GEMM algorithm") {
  hw::Profile p;
  p.kernels.push_back(hw::ProfileKernel{hw::MemoryKernel::kCopy, 2000000000, {{"bytes", 1000000000}}, hw::ProfileTiming{500, 1, 10}});  // 4000 GB/s
  p.kernels.push_back(hw::ProfileKernel{hw::MemoryKernel::kPermute, 1000000000, {{"tokens", 1}}, hw::ProfileTiming{300, 1, 10}});  // 3333 GB/s
  p.kernels.push_back(
      hw::ProfileKernel{hw::MemoryKernel::kRouterSoftmaxTopk, 100000000, {{"tokens", 1}}, hw::ProfileTiming{100, 1, 10}});  // 1000 GB/s
  p.gemm.push_back(hw::ProfileGemm{moesim::Precision::kBf16, 8, 8, 8, hw::ProfileTiming{100, 1, 10}, "heuristic#0", 95});
  p.gemm.push_back(hw::ProfileGemm{moesim::Precision::kBf16, 16, 16, 16, hw::ProfileTiming{100, 1, 10}, "heuristic#0", 80});
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
