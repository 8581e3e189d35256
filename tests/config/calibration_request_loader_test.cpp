// config/calibration_request_loader: the moesim.calibration-request/1 file moesim-calibrate reads. A
// well-formed request is read in full, what report/calibration_request_json writes reads back the same,
// and every case of tests/invalid-request is refused with its exact message.
#include <doctest/doctest.h>

#include "../refusal.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../test_paths.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/calibration_request_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "program/calibration_request.hpp"
#include "report/calibration_request_json.hpp"

namespace fs = std::filesystem;
using namespace moesim;

namespace {

const char* kGood = R"({"schema": "moesim.calibration-request/1",
  "gemm": [{"precision": "bf16", "m": 4096, "n": 7168, "k": 2048}, {"precision": "fp8", "m": 16, "n": 32, "k": 64}],
  "grouped_gemm": [{"precision": "bf16", "tokens": [100, 0, 28], "n": 4096, "k": 7168}],
  "attention": [{"batch_heads": 8, "seq": 4096, "head_dim": 192, "causal": true}],
  "kernels": [{"kernel": "permute", "shape": {"tokens": 8192, "hidden": 7168, "experts": 256, "topk": 8}},
              {"kernel": "router_sigmoid_topk", "shape": {"tokens": 8192, "hidden": 7168, "experts": 256, "topk": 8}},
              {"kernel": "cast_fp8", "shape": {"tokens": 8192, "hidden": 7168}}]})";

hw::CalibrationRequest parse(const std::string& text) { return config::parse_calibration_request(config::Json::parse(text), "req.json"); }

}  // namespace

TEST_CASE("calibration request: a well-formed file is read in full; tables may be absent") {
  const hw::CalibrationRequest r = parse(kGood);
  REQUIRE(r.gemm.size() == 2);
  CHECK(r.gemm[0].precision == Precision::kBf16);
  CHECK(r.gemm[1].precision == Precision::kFp8);
  CHECK(r.gemm[0].k == 2048);
  REQUIRE(r.grouped_gemm.size() == 1);
  CHECK(r.grouped_gemm[0].tokens == std::vector<std::int64_t>{100, 0, 28});
  REQUIRE(r.attention.size() == 1);
  CHECK(r.attention[0].head_dim == 192);
  CHECK(r.attention[0].causal);
  REQUIRE(r.kernels.size() == 3);
  CHECK(r.kernels[0].kernel == hw::MemoryKernel::kPermute);
  CHECK(r.kernels[0].experts == 256);
  // The router takes no hidden size and the cast no experts or top-k: read as 0.
  CHECK(r.kernels[1].kernel == hw::MemoryKernel::kRouterSigmoidTopk);
  CHECK(r.kernels[1].hidden == 0);
  CHECK(r.kernels[2].kernel == hw::MemoryKernel::kCastFp8);
  CHECK(r.kernels[2].topk == 0);
  CHECK(parse(R"({"schema": "moesim.calibration-request/1"})").gemm.empty());
}

TEST_CASE("calibration request: what moesim calibrate writes for a scenario reads back the same") {
  const Scenario s = *config::load_builtin_scenario("mixtral-8x7b-h100-64");
  std::int64_t left_out = 0;
  const hw::CalibrationRequest written = program::calibration_request_of(s, left_out);
  const hw::CalibrationRequest read = parse(report::calibration_request_json_text(written));
  REQUIRE(read.gemm.size() == written.gemm.size());
  for (std::size_t i = 0; i < read.gemm.size(); ++i) {
    CHECK(read.gemm[i].precision == written.gemm[i].precision);
    CHECK(read.gemm[i].m == written.gemm[i].m);
    CHECK(read.gemm[i].k == written.gemm[i].k);
  }
  REQUIRE(read.grouped_gemm.size() == written.grouped_gemm.size());
  for (std::size_t i = 0; i < read.grouped_gemm.size(); ++i) CHECK(read.grouped_gemm[i].tokens == written.grouped_gemm[i].tokens);
  REQUIRE(read.attention.size() == written.attention.size());
  CHECK(read.attention[0].seq == written.attention[0].seq);
  // The writer gives every kernel all four sizes; the reader keeps those the kernel takes.
  REQUIRE(read.kernels.size() == written.kernels.size());
  for (std::size_t i = 0; i < read.kernels.size(); ++i) {
    CHECK(read.kernels[i].kernel == written.kernels[i].kernel);
    CHECK(read.kernels[i].tokens == written.kernels[i].tokens);
  }
  // Read back once, the text is stable.
  CHECK(report::calibration_request_json_text(parse(report::calibration_request_json_text(read))) ==
        report::calibration_request_json_text(read));
}

TEST_CASE("calibration request: a missing file is refused with its name") {
  fs::current_path(test::source_dir());
  CHECK(test::refusal(config::load_calibration_request, "tests/invalid-request/no-such-request.json") ==
        "tests/invalid-request/no-such-request.json: at /: file not found");
}

TEST_CASE("every invalid calibration request is refused with its expected message") {
  fs::current_path(test::source_dir());
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator("tests/invalid-request")) {
    if (entry.path().extension() == ".json") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  for (const char* required : {"truncated", "wrong-schema", "missing-schema", "unknown-key-top", "gemm-fp16", "gemm-beyond-limit",
                               "grouped-no-tokens", "grouped-too-many-experts", "attention-seq-beyond-limit", "permute-hidden-not-8",
                               "router-topk-over-experts", "kernel-copy"}) {
    CAPTURE(required);
    CHECK(std::binary_search(cases.begin(), cases.end(), required));
  }
  for (const auto& name : cases) {
    CAPTURE(name);
    const std::string json = "tests/invalid-request/" + name + ".json";
    const std::string expect = "tests/invalid-request/" + name + ".expect";
    const std::string got = test::refusal(config::load_calibration_request, json);
    if (!fs::exists(expect)) {
      FAIL_CHECK("missing " << expect << "; refused with: " << got);
      continue;
    }
    const std::string expected = test::first_line(read_text_file(expect));
    CHECK(expected.starts_with(json + ": "));
    CHECK(got == expected);
  }
}
