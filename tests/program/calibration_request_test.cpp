// program/calibration_request: the kernel shapes one training step of a scenario queries, within the
// calibrator's limits (hw::calibration_limits); shapes beyond them are counted, not requested.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "config/builtin_scenarios.hpp"
#include "program/calibration_request.hpp"

using namespace moesim;

TEST_CASE("the request of Mixtral 8x7B on H100: QKV GEMM, expert GEMMs, one attention shape, MoE kernels") {
  const Scenario s = *config::load_builtin_scenario("mixtral-8x7b-h100-64");
  std::int64_t left_out = -1;
  const hw::CalibrationRequest r = program::calibration_request_of(s, left_out);
  CHECK(left_out == 0);
  // tp 1, seq 4096: the QKV projection is 4096 tokens × (32 + 2·8)·128 × 4096.
  CHECK(std::any_of(r.gemm.begin(), r.gemm.end(), [](const auto& g) { return g.m == 4096 && g.n == 6144 && g.k == 4096; }));
  for (const auto& g : r.gemm) CHECK(g.precision == Precision::kBf16);
  // One local expert at EP 8 with 4096 × 2 routed copies: fc1 (n = 2·14336) and fc2, each once.
  const std::vector<std::int64_t> tokens{8192};
  CHECK(std::count_if(r.grouped_gemm.begin(), r.grouped_gemm.end(),
                      [&](const auto& g) { return g.tokens == tokens && g.n == 28672 && g.k == 4096; }) == 1);
  CHECK(std::count_if(r.grouped_gemm.begin(), r.grouped_gemm.end(),
                      [&](const auto& g) { return g.tokens == tokens && g.n == 4096 && g.k == 14336; }) == 1);
  REQUIRE(r.attention.size() == 1);
  CHECK(r.attention[0].batch_heads == 32);
  CHECK(r.attention[0].seq == 4096);
  CHECK(r.attention[0].head_dim == 128);
  CHECK(r.attention[0].causal);
  std::vector<hw::MemoryKernel> kernels;
  for (const auto& k : r.kernels) {
    kernels.push_back(k.kernel);
    CHECK(k.tokens == 4096);
    CHECK(k.hidden == 4096);
    CHECK(k.experts == 8);
    CHECK(k.topk == 2);
  }
  CHECK(kernels == std::vector<hw::MemoryKernel>{hw::MemoryKernel::kPermute, hw::MemoryKernel::kUnpermute,
                                                 hw::MemoryKernel::kRouterSoftmaxTopk});
}

TEST_CASE("an attention sequence beyond the calibrator's limit is left out and counted") {
  Scenario s = *config::load_builtin_scenario("mixtral-8x7b-h100-64");
  s.training.seq_length = 2 * hw::calibration_limits::kMaxAttentionSeq;
  std::int64_t left_out = 0;
  const hw::CalibrationRequest r = program::calibration_request_of(s, left_out);
  CHECK(r.attention.empty());
  CHECK(left_out >= 1);
  CHECK_FALSE(r.gemm.empty());
}
