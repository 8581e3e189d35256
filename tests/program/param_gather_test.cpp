// --fp8-param-gather halves the distributed optimizer's parameter all-gather in per-tensor and
// blockwise FP8 only (Megatron MoE README: "50 % parameter all-gather (except MXFP8)").
#include <doctest/doctest.h>

#include "program/data_parallel.hpp"

using namespace moesim;

TEST_CASE("parameter all-gather bytes per parameter") {
  Scenario s;
  s.precision = Precision::kFp8;
  CHECK(program::param_gather_bytes_per_param(s) == 2.0);
  s.optimizer.fp8_param_gather = true;
  CHECK(program::param_gather_bytes_per_param(s) == 1.0);
  s.precision = Precision::kFp8Blockwise;
  CHECK(program::param_gather_bytes_per_param(s) == 1.0);
  s.precision = Precision::kMxfp8;
  CHECK(program::param_gather_bytes_per_param(s) == 2.0);
  // --fp4-param-gather: 4-bit values and one E4M3 scale per 16 elements.
  s.precision = Precision::kNvfp4;
  s.optimizer.fp8_param_gather = false;
  CHECK(program::param_gather_bytes_per_param(s) == 2.0);
  s.optimizer.fp4_param_gather = true;
  CHECK(program::param_gather_bytes_per_param(s) == 0.5625);
}

TEST_CASE("gradient reduce-scatter bytes per parameter follow grad_reduce_in_fp32") {
  Scenario s;
  s.precision = Precision::kBf16;
  CHECK(program::grad_reduce_bytes_per_param(s) == 4.0);  // Megatron-LM's default for bf16
  s.optimizer.grad_reduce_in_fp32 = false;
  CHECK(program::grad_reduce_bytes_per_param(s) == 2.0);  // Megatron-Bridge's performance recipes
  s.precision = Precision::kFp16;
  s.optimizer.grad_reduce_in_fp32 = true;
  CHECK(program::grad_reduce_bytes_per_param(s) == 2.0);  // fp16 reduces fp16 gradients
}

TEST_CASE("DP overlap: one chunk keeps the bucket formula, model chunks hide more behind later passes") {
  using program::DpOverlapWindow;
  // One chunk: max(seconds / buckets, seconds − pass).
  CHECK(program::exposed_grad_reduction(DpOverlapWindow{5, 5, 1, 4, 2}) == doctest::Approx(3.0));
  CHECK(program::exposed_param_gather(DpOverlapWindow{5, 5, 1, 4, 2}) == doctest::Approx(3.0));
  CHECK(program::exposed_grad_reduction(DpOverlapWindow{1, 4, 1, 4, 2}) == doctest::Approx(0.25));
  // Two chunks on two stages, 4 s over 4 buckets, a 2 s pass (1 s per chunk): chunk 1's last backward
  // ends 2 s before the end and its 2 s reduction finishes at −1 s; chunk 0's ends at 0 and its
  // reduction (last bucket ready at 0, 1 s per bucket pair) finishes at +1 s: 1 s exposed, not 2.
  CHECK(program::exposed_grad_reduction(DpOverlapWindow{4, 4, 2, 2, 2}) == doctest::Approx(1.0));
  // 8 s: chunk 1 finishes at max(−2 + 2, −3 + 4) = 1; chunk 0 queues behind it: 1 + 4 = 5 s exposed.
  CHECK(program::exposed_grad_reduction(DpOverlapWindow{8, 4, 2, 2, 2}) == doctest::Approx(5.0));
  // Gathers: chunk 0 waits 1 s for its first bucket pair and its forward ends with its last (2 s);
  // its second micro-batch runs 2–3 s while chunk 1's weights arrive by 4 s, its first bucket at 3 s.
  CHECK(program::exposed_param_gather(DpOverlapWindow{4, 4, 2, 2, 2}) == doctest::Approx(1.0));
  CHECK(program::exposed_grad_reduction(DpOverlapWindow{0, 4, 2, 2, 2}) == 0.0);
  CHECK(program::exposed_param_gather(DpOverlapWindow{0, 4, 2, 2, 2}) == 0.0);
}
