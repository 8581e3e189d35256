// GPU and cluster presets: every file loads strictly, every figure carries a source, and the figures
// are the datasheet / published values the sources name.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "config/hw_loader.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "../test_paths.hpp"

using namespace moesim;
using config::Json;

namespace {

const std::vector<std::string> kGpus = {"a100-sxm-80g", "b200", "b300", "gb200", "gb300", "h100-sxm", "h200-sxm", "h800-sxm"};
const std::vector<std::string> kSystems = {"dgx-a100", "dgx-b200", "dgx-b300", "gb200-nvl72",
                                           "gb300-nvl72", "hgx-h100", "hgx-h200", "hgx-h800"};

double tflops(const hw::GpuSpec& g, Precision p) { return g.peak(p).value().value() / kTera; }

std::string error_of(const Json& j, bool gpu) {
  try {
    if (gpu) {
      (void)config::parse_gpu_spec(j, "bad.json");
    } else {
      (void)config::parse_system_spec(j, "bad.json");
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// A valid GPU file, broken one field at a time by the tests.
Json gpu_json() {
  return Json::parse(R"({"name": "x", "display_name": "X", "architecture": "hopper", "sm_count": 132,
    "dense_peak_tflops": {"bf16": 989, "fp8": 1979}, "hbm_capacity_gb": 80, "hbm_bandwidth_gbps": 3350,
    "nvlink_bandwidth_gbps": 450, "gemm_peak_efficiency": 0.8, "hbm_efficiency": 0.86, "attention_efficiency": 0.33,
    "sources": {"architecture": "a", "sm_count": "a", "dense_peak_tflops": "a", "hbm_capacity_gb": "a",
      "hbm_bandwidth_gbps": "a", "nvlink_bandwidth_gbps": "a", "gemm_peak_efficiency": "a", "hbm_efficiency": "a",
      "attention_efficiency": "a"}})");
}

}  // namespace

TEST_CASE("every GPU preset loads, with a source for every figure") {
  CHECK(config::gpu_preset_names() == kGpus);
  const std::vector<std::string> figures = {"architecture",          "sm_count",          "dense_peak_tflops",
                                            "hbm_capacity_gb",       "hbm_bandwidth_gbps", "nvlink_bandwidth_gbps",
                                            "gemm_peak_efficiency",  "hbm_efficiency",    "attention_efficiency"};
  for (const auto& name : kGpus) {
    CAPTURE(name);
    const hw::GpuSpec g = config::load_gpu_preset(name);
    CHECK(g.name == name);
    CHECK_FALSE(g.display_name.empty());
    for (const auto& f : figures) {
      CAPTURE(f);
      REQUIRE(g.sources.count(f) == 1);
      CHECK(g.sources.at(f).size() > 20);  // a citation, not a placeholder
    }
    CHECK(g.supports(Precision::kBf16));
    CHECK(g.supports(Precision::kFp16));
    CHECK(g.sm_count >= 100);
    CHECK(g.gemm_peak_efficiency > 0.6);
    CHECK(g.gemm_peak_efficiency < 0.95);
    CHECK(g.hbm_efficiency > 0.6);
    CHECK(g.hbm_efficiency < 1.0);
    CHECK(g.attention_efficiency > 0.1);
    CHECK(g.attention_efficiency < 0.8);
    CHECK(g.hbm_capacity.value() >= 80 * kGiB);
    // Lower precisions never run slower than BF16 on the same tensor cores.
    for (Precision p : kAllPrecisions) {
      if (g.supports(p)) CHECK(tflops(g, p) >= tflops(g, Precision::kBf16));
    }
  }
}

TEST_CASE("GPU figures are the datasheet values") {
  const auto h100 = config::load_gpu_preset("h100-sxm");
  CHECK(tflops(h100, Precision::kBf16) == 989);
  CHECK(tflops(h100, Precision::kFp8) == 1979);
  CHECK(h100.supports(Precision::kFp8Blockwise));
  CHECK_FALSE(h100.supports(Precision::kNvfp4));
  CHECK_FALSE(h100.supports(Precision::kMxfp8));
  CHECK(h100.nvlink_bandwidth.value() == doctest::Approx(450e9));
  CHECK(h100.hbm_bandwidth.value() == doctest::Approx(3.35e12));
  CHECK(h100.hbm_capacity.value() == doctest::Approx(80 * kGiB));
  CHECK(h100.sm_count == 132);
  CHECK(h100.architecture == "hopper");

  const auto a100 = config::load_gpu_preset("a100-sxm-80g");
  CHECK(tflops(a100, Precision::kBf16) == 312);
  CHECK_FALSE(a100.supports(Precision::kFp8));
  CHECK(a100.nvlink_bandwidth.value() == doctest::Approx(300e9));
  CHECK(a100.sm_count == 108);

  CHECK(config::load_gpu_preset("h800-sxm").nvlink_bandwidth.value() == doctest::Approx(200e9));
  CHECK(config::load_gpu_preset("h200-sxm").hbm_capacity.value() == doctest::Approx(141 * kGiB));

  for (const char* name : {"b200", "b300", "gb200", "gb300"}) {
    CAPTURE(name);
    const auto g = config::load_gpu_preset(name);
    CHECK(g.architecture == "blackwell");
    CHECK(g.supports(Precision::kNvfp4));
    CHECK(g.supports(Precision::kMxfp8));
    CHECK(g.nvlink_bandwidth.value() == doctest::Approx(900e9));
    CHECK(tflops(g, Precision::kNvfp4) >= 2 * tflops(g, Precision::kFp8));
  }
  CHECK(tflops(config::load_gpu_preset("b200"), Precision::kBf16) == 2250);
  CHECK(tflops(config::load_gpu_preset("gb200"), Precision::kBf16) == 2500);
}

TEST_CASE("GEMM efficiencies are the published sustained (longest-running) matmul rates over the peak") {
  const auto published = moesim::test::shared_dir() / "validation" / "published.json";
  if (!std::filesystem::exists(published)) {
    MESSAGE("skipped: " << published.string() << " not found");
    return;
  }
  const Json points = config::load_json_file(published.string());
  // published.json id of the longest-running 16-bit GEMM measurement → GPU preset; Blackwell GPUs
  // have only mamf-finder's best short-run shape published, which then stands in.
  const std::vector<std::pair<std::string, std::string>> pairs = {{"azure-gemm-a100-fp16-16384x16384x16384", "a100-sxm-80g"},
                                                                  {"torchbench-h100-bf16-10240", "h100-sxm"},
                                                                  {"mamf-b200-bf16", "b200"},
                                                                  {"mamf-b300-bf16", "b300"},
                                                                  {"mamf-gb200-bf16", "gb200"}};
  for (const auto& pair : pairs) {
    const std::string& id = pair.first;  // not a structured binding: clang 14 cannot capture those (CAPTURE)
    const std::string& gpu = pair.second;
    CAPTURE(id);
    const Json* point = nullptr;
    for (const auto& p : points) {
      if (p.value("id", "") == id) point = &p;
    }
    REQUIRE(point != nullptr);
    const auto g = config::load_gpu_preset(gpu);
    CHECK(g.gemm_peak_efficiency == doctest::Approx((*point)["value"].get<double>() / tflops(g, Precision::kBf16)).epsilon(0.002));
    CHECK(g.sources.at("gemm_peak_efficiency").find(id) != std::string::npos);
  }
}

TEST_CASE("every system preset loads, sized to the requested GPUs") {
  CHECK(config::system_preset_names() == kSystems);
  const std::vector<std::string> figures = {"gpus_per_node",      "host",               "nvlink_domain_size", "nvls",
                                            "nics_per_gpu",       "nic_bandwidth_gbit", "nvlink_efficiency",
                                            "network_efficiency", "nvlink_latency_us",  "network_latency_us"};
  for (const auto& name : kSystems) {
    CAPTURE(name);
    const auto s = config::load_system_preset(name, 144);
    CHECK(s.name == name);
    CHECK(s.gpus == 144);
    CHECK_FALSE(s.gpu.name.empty());
    CHECK(s.gpu.sources.size() >= 9);
    for (const auto& f : figures) {
      CAPTURE(f);
      REQUIRE(s.sources.count(f) == 1);
      CHECK(s.sources.at(f).size() > 20);
    }
    CHECK(s.nvlink_domain_size % s.gpus_per_node == 0);
    CHECK(s.nvlink_efficiency > 0.7);
    CHECK(s.nvlink_efficiency < 0.9);
    CHECK(s.network_efficiency > 0.8);
    CHECK(s.network_efficiency < 1.0);
    CHECK(s.nvlink_latency < s.network_latency);
    CHECK(s.nics_per_gpu == 1);
  }
  const auto h100 = config::load_system_preset("hgx-h100", 64);
  CHECK(h100.gpu.name == "h100-sxm");
  CHECK(h100.gpus_per_node == 8);
  CHECK(h100.num_nvlink_domains() == 8);
  CHECK(h100.nvls);
  CHECK(h100.network_bandwidth_per_gpu().value() == doctest::Approx(50e9));
  CHECK(h100.nvlink_latency.value() == doctest::Approx(3.4e-6));
  CHECK(h100.network_latency.value() == doctest::Approx(14e-6));
  CHECK_FALSE(config::load_system_preset("dgx-a100", 8).nvls);
  CHECK(config::load_system_preset("dgx-a100", 8).network_bandwidth_per_gpu().value() == doctest::Approx(25e9));
  const auto nvl72 = config::load_system_preset("gb200-nvl72", 144);
  CHECK(nvl72.gpus_per_node == 4);
  CHECK(nvl72.nvlink_domain_size == 72);
  CHECK(nvl72.num_nvlink_domains() == 2);
  CHECK(config::load_system_preset("gb300-nvl72", 72).network_bandwidth_per_gpu().value() == doctest::Approx(100e9));
  CHECK(config::load_system_preset("hgx-h800", 8).gpu.nvlink_bandwidth.value() == doctest::Approx(200e9));
}

TEST_CASE("unknown presets list the known ones") {
  try {
    (void)config::load_gpu_preset("h100");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "at /system/gpu: value \"h100\": unknown GPU preset (did you mean \"h100-sxm\"?); allowed: a100-sxm-80g, b200, "
          "b300, gb200, gb300, "
          "h100-sxm, h200-sxm, h800-sxm");
  }
  try {
    (void)config::load_system_preset("dgx-h100", 8);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "at /system/preset: value \"dgx-h100\": unknown system preset (did you mean \"dgx-a100\" or \"hgx-h100\"?); "
          "allowed: dgx-a100, dgx-b200, dgx-b300, "
          "gb200-nvl72, gb300-nvl72, hgx-h100, hgx-h200, hgx-h800");
  }
}

TEST_CASE("a GPU file is read strictly: unknown keys, missing sources, impossible formats") {
  Json j = gpu_json();
  CHECK(error_of(j, true).empty());

  Json extra = j;
  extra["boost_clock_mhz"] = 1980;
  CHECK(error_of(extra, true).starts_with("bad.json: at /boost_clock_mhz: unknown key 'boost_clock_mhz'; allowed: "));

  Json unsourced = j;
  unsourced["sources"].erase("hbm_efficiency");
  CHECK(error_of(unsourced, true) ==
        "bad.json: at /sources/hbm_efficiency: required field is missing: every figure needs its source");

  Json empty_source = j;
  empty_source["sources"]["sm_count"] = "";
  CHECK(error_of(empty_source, true) == "bad.json: at /sources/sm_count: value \"\": must not be empty");

  Json fp4_on_hopper = j;
  fp4_on_hopper["dense_peak_tflops"]["nvfp4"] = 4000;
  CHECK(error_of(fp4_on_hopper, true) ==
        "bad.json: at /dense_peak_tflops/nvfp4: value 4000: nvfp4 tensor cores do not exist on hopper GPUs; "
        "allowed: bf16, fp16, fp8, fp8-blockwise");

  Json no_bf16 = j;
  no_bf16["dense_peak_tflops"].erase("bf16");
  CHECK(error_of(no_bf16, true) ==
        "bad.json: at /dense_peak_tflops/bf16: required field is missing: the BF16 peak is the MFU denominator");

  Json per_precision = j;
  per_precision["sources"].erase("dense_peak_tflops");
  CHECK(error_of(per_precision, true) ==
        "bad.json: at /sources/dense_peak_tflops: required field is missing: every figure needs its source");
  per_precision["sources"]["dense_peak_tflops.bf16"] = "datasheet";
  per_precision["sources"]["dense_peak_tflops.fp8"] = "datasheet";
  CHECK(error_of(per_precision, true).empty());

  Json efficiency = j;
  efficiency["gemm_peak_efficiency"] = 1.2;
  CHECK(error_of(efficiency, true) ==
        "bad.json: at /gemm_peak_efficiency: value 1.2: out of range; allowed: numbers > 0 and <= 1");

  Json wrong_type = j;
  wrong_type["sm_count"] = "132";
  CHECK(error_of(wrong_type, true) == "bad.json: at /sm_count: value \"132\": expected an integer, got a string");
}

TEST_CASE("a GPU file's EP kernel tables are read strictly and cite their source") {
  Json j = gpu_json();
  j["ep_kernel_algbw_gb_per_s"] = Json::parse(
      R"({"deepep": [{"ranks": 8, "sms": 16, "dispatch_fp8": 246, "dispatch_bf16": 348, "combine": 302}]})");
  CHECK(error_of(j, true) ==
        "bad.json: at /sources/ep_kernel_algbw_gb_per_s.deepep: required field is missing: every figure needs its source");
  j["sources"]["ep_kernel_algbw_gb_per_s.deepep"] = "DeepEP README";
  CHECK(error_of(j, true).empty());

  Json unknown = j;
  unknown["ep_kernel_algbw_gb_per_s"]["nccl"] = Json::array();
  CHECK(error_of(unknown, true) ==
        "bad.json: at /ep_kernel_algbw_gb_per_s/nccl: unknown key 'nccl'; allowed: deepep, hybridep");

  Json twice = j;
  twice["ep_kernel_algbw_gb_per_s"]["deepep"].push_back(twice["ep_kernel_algbw_gb_per_s"]["deepep"][0]);
  CHECK(error_of(twice, true) ==
        "bad.json: at /ep_kernel_algbw_gb_per_s/deepep/1/sms: value 16: one row per (ranks, sms): 8 ranks at this SM "
        "count appear twice");

  Json too_many_sms = j;
  too_many_sms["ep_kernel_algbw_gb_per_s"]["deepep"][0]["sms"] = 200;
  CHECK(error_of(too_many_sms, true).starts_with("bad.json: at /ep_kernel_algbw_gb_per_s/deepep/0/sms: value 200: out of range"));

  Json empty = j;
  empty["ep_kernel_algbw_gb_per_s"]["deepep"] = Json::array();
  CHECK(error_of(empty, true) ==
        "bad.json: at /ep_kernel_algbw_gb_per_s/deepep: value []: expected a non-empty array of published rows");

  Json missing = j;
  missing["ep_kernel_algbw_gb_per_s"]["deepep"][0].erase("combine");
  CHECK(error_of(missing, true).starts_with("bad.json: at /ep_kernel_algbw_gb_per_s/deepep/0/combine: required field is missing"));

  // The RDMA tables: the same rows, their own sources and paths.
  Json rdma = j;
  rdma["ep_kernel_rdma_gb_per_s"] = Json::parse(
      R"({"hybridep": [{"ranks": 64, "sms": 4, "dispatch_fp8": 30.42, "dispatch_bf16": 40.63, "combine": 41.0}]})");
  CHECK(error_of(rdma, true) ==
        "bad.json: at /sources/ep_kernel_rdma_gb_per_s.hybridep: required field is missing: every figure needs its source");
  rdma["sources"]["ep_kernel_rdma_gb_per_s.hybridep"] = "DeepEP docs/README_Hybrid-EP.md";
  CHECK(error_of(rdma, true).empty());
  CHECK(config::parse_gpu_spec(rdma, "ok.json").ep_kernel_rdma.at("hybridep").rows.at(0).ranks == 64);
  Json negative = rdma;
  negative["ep_kernel_rdma_gb_per_s"]["hybridep"][0]["combine"] = -1;
  CHECK(error_of(negative, true).starts_with("bad.json: at /ep_kernel_rdma_gb_per_s/hybridep/0/combine: value -1: out of range"));
}

TEST_CASE("the Hopper presets carry DeepEP's and HybridEP's RDMA rates, so both are told apart there") {
  for (const char* name : {"h100-sxm", "h200-sxm", "h800-sxm"}) {
    CAPTURE(name);
    const hw::GpuSpec g = config::load_gpu_preset(name);
    CHECK(g.ep_kernel_rdma.count("deepep") == 1);
    CHECK(g.ep_kernel_rdma.count("hybridep") == 1);
    CHECK(g.publishes_both_ep_kernels());
  }
  // HybridEP's H100 table: 64 ranks at 8 SMs, FP8 dispatch 35.71 GB/s.
  const hw::GpuSpec h100 = config::load_gpu_preset("h100-sxm");
  CHECK(h100.ep_kernel_rdma.at("hybridep").rate(hw::EpKernelPhase::kDispatchFp8, 64, 8)->value() == 35.71e9);
  CHECK_FALSE(config::load_gpu_preset("a100-sxm-80g").publishes_both_ep_kernels());
}

TEST_CASE("a system file is read strictly and names the GPU preset it uses") {
  Json s = Json::parse(R"({"name": "x", "description": "d", "gpu": "h100-sxm", "gpus_per_node": 8, "host": "x86",
    "nvlink_domain_size": 8, "nvls": true, "nics_per_gpu": 1, "nic_bandwidth_gbit": 400, "nvlink_efficiency": 0.8,
    "network_efficiency": 0.9, "nvlink_latency_us": 3, "network_latency_us": 10, "host_link_gb_per_s": 50,
    "host_memory_gb_per_s": 70,
    "sources": {"gpus_per_node": "a", "host": "a", "nvlink_domain_size": "a", "nvls": "a", "nics_per_gpu": "a",
      "nic_bandwidth_gbit": "a", "nvlink_efficiency": "a", "network_efficiency": "a", "nvlink_latency_us": "a",
      "network_latency_us": "a", "host_link_gb_per_s": "a", "host_memory_gb_per_s": "a"}})");
  CHECK(error_of(s, false).empty());
  CHECK(config::parse_system_spec(s, "ok.json").gpu.name == "h100-sxm");
  CHECK(config::parse_system_spec(s, "ok.json").host_link_bandwidth.value() == 50e9);

  Json no_link = s;
  no_link.erase("host_link_gb_per_s");
  CHECK(error_of(no_link, false) == "bad.json: at /host_link_gb_per_s: required field is missing");

  Json bad_gpu = s;
  bad_gpu["gpu"] = "h100";
  CHECK(error_of(bad_gpu, false).starts_with("bad.json: at /gpu: value \"h100\": unknown GPU preset (did you mean \"h100-sxm\"?); allowed: a100-sxm-80g"));

  Json partial_domain = s;
  partial_domain["nvlink_domain_size"] = 12;
  CHECK(error_of(partial_domain, false) ==
        "bad.json: at /nvlink_domain_size: value 12: an NVLink domain spans whole nodes: must be a multiple of "
        "gpus_per_node (8)");

  Json no_nvls = s;
  no_nvls.erase("nvls");
  CHECK(error_of(no_nvls, false) == "bad.json: at /nvls: required field is missing; allowed: true, false");

  Json arm_host = s;
  arm_host["host"] = "arm";
  CHECK(error_of(arm_host, false) == "bad.json: at /host: value \"arm\": unknown value; allowed: x86, grace");

  Json unsourced = s;
  unsourced["sources"].erase("network_latency_us");
  CHECK(error_of(unsourced, false) ==
        "bad.json: at /sources/network_latency_us: required field is missing: every figure needs its source");
}

TEST_CASE("hw presets: per-precision GEMM ceilings cite a source and do not exceed the BF16 short-run best") {
  for (const auto& name : config::gpu_preset_names()) {
    const hw::GpuSpec g = config::load_gpu_preset(name);
    for (const auto& [p, eff] : g.gemm_peak_efficiency_by_precision) {
      CAPTURE(name);
      CHECK(g.supports(p));
      CHECK(eff > 0.4);
      CHECK(eff < 0.95);
      CHECK(g.sources.count("gemm_peak_efficiency_by_precision." + std::string(to_string(p))) == 1);
      CHECK(g.gemm_efficiency_ceiling(p) == eff);
    }
    CHECK(g.gemm_efficiency_ceiling(Precision::kBf16) == g.gemm_peak_efficiency);
  }
}
