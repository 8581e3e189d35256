// --fp8-param-gather halves the distributed optimizer's parameter all-gather in per-tensor and
// blockwise FP8 only (Megatron MoE README: "50 % parameter all-gather (except MXFP8)").
#include <doctest/doctest.h>

#include "estimate/data_parallel.hpp"

using namespace moesim;

TEST_CASE("parameter all-gather bytes per parameter") {
  Scenario s;
  s.precision = Precision::kFp8;
  CHECK(estimate::param_gather_bytes_per_param(s) == 2.0);
  s.optimizer.fp8_param_gather = true;
  CHECK(estimate::param_gather_bytes_per_param(s) == 1.0);
  s.precision = Precision::kFp8Blockwise;
  CHECK(estimate::param_gather_bytes_per_param(s) == 1.0);
  s.precision = Precision::kMxfp8;
  CHECK(estimate::param_gather_bytes_per_param(s) == 2.0);
  // --fp4-param-gather: 4-bit values and one E4M3 scale per 16 elements.
  s.precision = Precision::kNvfp4;
  s.optimizer.fp8_param_gather = false;
  CHECK(estimate::param_gather_bytes_per_param(s) == 2.0);
  s.optimizer.fp4_param_gather = true;
  CHECK(estimate::param_gather_bytes_per_param(s) == 0.5625);
}

TEST_CASE("gradient reduce-scatter bytes per parameter follow grad_reduce_in_fp32") {
  Scenario s;
  s.precision = Precision::kBf16;
  CHECK(estimate::grad_reduce_bytes_per_param(s) == 4.0);  // Megatron-LM's default for bf16
  s.optimizer.grad_reduce_in_fp32 = false;
  CHECK(estimate::grad_reduce_bytes_per_param(s) == 2.0);  // Megatron-Bridge's performance recipes
  s.precision = Precision::kFp16;
  s.optimizer.grad_reduce_in_fp32 = true;
  CHECK(estimate::grad_reduce_bytes_per_param(s) == 2.0);  // fp16 reduces fp16 gradients
}
