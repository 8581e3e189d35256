// report/profile_json: the moesim.profile/1 text moesim-calibrate writes. Byte for byte what its own
// writer (calibrate/profile.cpp, before this one replaced it) wrote for the same data
// (tests/data/profile-written-by-calibrate.json), and what config's loader reads back.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"
#include "config/profile_loader.hpp"
#include "report/profile_json.hpp"

using namespace moesim;

namespace {

void fill_measured(hw::Profile& p) {
  auto& v = p.provenance;
  v.gpu = "h200-sxm";
  v.device_name = "NVIDIA H200";
  v.sm_count = 132;
  v.sm_clock_mhz = 1980;
  v.memory_clock_mhz = 2619;
  v.gpus_visible = 8;
  v.driver = "570.124.06";
  v.cuda_runtime = "12.8";
  v.cublas = "12.8.4";
  v.nccl = "2.26.2";
  v.date = "2026-01-02T03:04:05Z";
  v.host = "node-0";
  v.command = "moesim-calibrate --out h200.json --quick";
  using hw::ProfileTiming;
  p.gemm.push_back({Precision::kBf16, 4096, 7168, 2048, ProfileTiming{812.25, 3.5, 20}, "heuristic#0", 790.125});
  p.gemm.push_back({Precision::kFp8, 1, 2, 3, ProfileTiming{10.5, 0.25, 20}, "heuristic#0", 9.75});
  p.grouped_gemm.push_back({Precision::kBf16, hw::GroupedImplementation::kGroupedBatched, {3, 0, 5}, 64, 32, ProfileTiming{7, 1, 10}});
  p.grouped_gemm.push_back({Precision::kBf16, hw::GroupedImplementation::kLoop, {100}, 4096, 7168, ProfileTiming{0.1, 0.01, 10}});
  p.kernels.push_back({hw::MemoryKernel::kCopy, 2097152, {{"bytes", 1048576}}, ProfileTiming{1.3333333333333333, 0.2, 20}});
  p.kernels.push_back({hw::MemoryKernel::kPermute, 4096, {{"tokens", 8}, {"hidden", 128}, {"experts", 8}, {"topk", 2}},
                       ProfileTiming{2, 0.5, 20}});
  p.kernels.push_back({hw::MemoryKernel::kRouterSigmoidTopk, 4096, {{"tokens", 8}, {"experts", 256}, {"topk", 8}}, ProfileTiming{3, 0, 20}});
  p.kernels.push_back({hw::MemoryKernel::kCastFp8, 8192, {{"tokens", 8}, {"hidden", 512}}, ProfileTiming{1e-3, 0, 20}});
  p.attention.push_back({hw::AttentionImplementation::kUnfused, hw::AttentionDirection::kForward, 4, 512, 64, true, ProfileTiming{100, 3, 20}});
  p.attention.push_back(
      {hw::AttentionImplementation::kUnfused, hw::AttentionDirection::kBackward, 4, 512, 64, false, ProfileTiming{250.75, 3, 20}});
  p.collectives.push_back({hw::ProfileCollectiveOp::kAllReduce, 8, 8, 1024, ProfileTiming{20, 1, 20}, 0.0512, 0.0896});
  p.collectives.push_back({hw::ProfileCollectiveOp::kAllToAll, 8, 8, 1073741824, ProfileTiming{12000, 40, 10}, 89.47848533333333,
                           78.29367466666667});
  p.collectives.push_back({hw::ProfileCollectiveOp::kSendRecv, 2, 2, 1024, ProfileTiming{8, 0.5, 20}, 0.128, 0.128});
}

}  // namespace

TEST_CASE("the profile text is byte for byte what moesim-calibrate has always written, and it loads") {
  hw::Profile p;
  fill_measured(p);
  const std::string text = report::profile_to_json_text(p);
  const std::string golden = (test::source_dir() / "tests" / "data" / "profile-written-by-calibrate.json").string();
  CHECK(text == test::slurp(golden));
  const auto loaded = config::parse_profile(config::Json::parse(text), "written.json");
  CHECK(loaded->provenance.sm_clock_mhz == 1980.0);
  CHECK(loaded->gemm.size() == 2);
  CHECK(loaded->kernels.size() == 4);
  CHECK(loaded->collectives.size() == 3);
}

TEST_CASE("every table is present even when empty; a published profile's unknown figures are left out") {
  hw::Profile p;
  p.provenance.source = hw::ProfileSource::kPublished;
  p.provenance.gpu = "h100-sxm";
  p.provenance.sm_clock_mhz = 1755.5;
  const auto j = nlohmann::ordered_json::parse(report::profile_to_json_text(p));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema", "provenance", "gemm", "grouped_gemm", "kernels", "attention", "collectives"});
  for (const char* table : {"gemm", "grouped_gemm", "kernels", "attention", "collectives"}) CHECK(j[table] == nlohmann::ordered_json::array());
  CHECK(j["schema"] == "moesim.profile/1");
  CHECK(j["provenance"]["source"] == "published");
  CHECK_FALSE(j["provenance"].contains("sm_count"));
  CHECK_FALSE(j["provenance"].contains("gpus_visible"));
  CHECK(j["provenance"]["sm_clock_mhz"] == 1755.5);
  CHECK(j["provenance"]["citations"] == nlohmann::ordered_json::array());
}
