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
}
