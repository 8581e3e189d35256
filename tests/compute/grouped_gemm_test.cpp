#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "compute/grouped_gemm.hpp"
#include "config/hw_loader.hpp"

using namespace moesim;
using compute::GemmPart;

namespace {

double grouped(const compute::KernelCostModel& k, const std::vector<std::int64_t>& tokens, std::int64_t n,
               std::int64_t kk, GemmPart part, Precision p = Precision::kBf16) {
  return compute::grouped_gemm(k, {tokens, n, kk, part}, p).value();
}

/// The batched GEMM LayerCostModel::add_gemm costs for `experts` × m_e tokens in this part.
double batched(const compute::KernelCostModel& k, std::int64_t m, std::int64_t n, std::int64_t kk,
               std::int64_t experts, GemmPart part, Precision p = Precision::kBf16) {
  switch (part) {
    case GemmPart::kForward: return k.gemm({m, n, kk, experts}, p).value();
    case GemmPart::kDgrad: return k.gemm({m, kk, n, experts}, p, compute::Accumulation::kSplit).value();
    case GemmPart::kWgrad: return k.gemm({kk, n, m, experts}, p, compute::Accumulation::kSplit).value();
  }
  return 0;
}

constexpr GemmPart kParts[] = {GemmPart::kForward, GemmPart::kDgrad, GemmPart::kWgrad};

}  // namespace

TEST_CASE("grouped GEMM with equal tokens per expert is the batched GEMM the estimator costs") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  struct Case {
    std::int64_t m, n, kk, experts;
  };
  // DeepSeek-V3 expert fc1 / fc2 at EP64 (4 local experts), Mixtral-like 8 experts, a tiny ragged shape.
  const Case cases[] = {{4096, 4096, 7168, 4}, {4096, 7168, 2048, 4}, {2048, 28672, 4096, 8}, {100, 300, 70, 3}};
  for (const Case& c : cases) {
    for (const GemmPart part : kParts) {
      for (const Precision p : {Precision::kBf16, Precision::kFp8}) {
        const std::vector<std::int64_t> tokens(static_cast<std::size_t>(c.experts), c.m);
        CAPTURE(c.m);
        CAPTURE(static_cast<int>(part));
        CHECK(grouped(k, tokens, c.n, c.kk, part, p) ==
              doctest::Approx(batched(k, c.m, c.n, c.kk, c.experts, part, p)).epsilon(0.02).scale(0));
      }
    }
  }
}

TEST_CASE("equal totals, different spreads: the ragged group wastes more tile padding and costs more") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  // 8 experts, 8 × 1000 copies; the spread one has the same 8000 copies in uneven, unaligned groups.
  const std::vector<std::int64_t> even(8, 1000);
  const std::vector<std::int64_t> spread{2900, 1700, 1100, 900, 700, 400, 200, 100};
  // Forward and data gradient: the token count is a tile dimension, quantised per expert.
  for (const GemmPart part : {GemmPart::kForward, GemmPart::kDgrad}) {
    CAPTURE(static_cast<int>(part));
    CHECK(grouped(k, spread, 4096, 7168, part) > grouped(k, even, 4096, 7168, part));
  }
  // Weight gradient: the tokens are the inner dimension; every expert has the same k×n tiles and the
  // per-tile overhead is paid once per expert whatever its depth, so only the total depth matters
  // while every expert has tokens and the tiles fill the SMs.
  CHECK(grouped(k, spread, 4096, 7168, GemmPart::kWgrad) ==
        doctest::Approx(grouped(k, even, 4096, 7168, GemmPart::kWgrad)).epsilon(1e-12).scale(0));
  // Small experts waste more: 64 experts of 10 copies against 1 of 640 (the total) plus 63 empty.
  std::vector<std::int64_t> tiny(64, 10);
  std::vector<std::int64_t> one_full(64, 0);
  one_full[0] = 640;
  CHECK(grouped(k, tiny, 2048, 7168, GemmPart::kForward) > grouped(k, one_full, 2048, 7168, GemmPart::kForward));
}

TEST_CASE("one expert with every token against balanced experts") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  const std::vector<std::int64_t> balanced(4, 4096);
  std::vector<std::int64_t> hot(4, 0);
  hot[0] = 4 * 4096;
  // Forward: the same tiles, one weight read instead of four; the compute-bound time is about the same.
  const double fwd_balanced = grouped(k, balanced, 4096, 7168, GemmPart::kForward);
  const double fwd_hot = grouped(k, hot, 4096, 7168, GemmPart::kForward);
  CHECK(fwd_hot == doctest::Approx(fwd_balanced).epsilon(0.02).scale(0));
  // Weight gradient of a small expert (dW 1024×512: 16 large tiles each): the balanced group fills
  // the SMs in one wave; the hot expert's few tiles carry all the depth while most SMs idle.
  const std::vector<std::int64_t> balanced8(8, 4096);
  std::vector<std::int64_t> hot8(8, 0);
  hot8[0] = 8 * 4096;
  CHECK(grouped(k, hot8, 512, 1024, GemmPart::kWgrad) > 1.5 * grouped(k, balanced8, 512, 1024, GemmPart::kWgrad));
}

TEST_CASE("grouped GEMM time never decreases as any expert receives more tokens; empty experts cost nothing") {
  const compute::KernelCostModel k(config::load_gpu_preset("h100-sxm"));
  const std::vector<std::int64_t> base{0, 37, 128, 129, 1000, 4096};
  for (const GemmPart part : kParts) {
    for (std::size_t e = 0; e < base.size(); ++e) {
      std::vector<std::int64_t> tokens = base;
      double previous = grouped(k, tokens, 2048, 7168, part);
      for (const std::int64_t add : {1, 1, 62, 64, 300, 4000}) {
        tokens[e] += add;
        const double t = grouped(k, tokens, 2048, 7168, part);
        CAPTURE(e);
        CHECK(t >= previous);
        previous = t;
      }
    }
  }
  // Zero-token experts add nothing; a group with no tokens at all still pays its launch.
  CHECK(grouped(k, {0, 0, 500, 0}, 2048, 7168, GemmPart::kForward) ==
        doctest::Approx(grouped(k, {500}, 2048, 7168, GemmPart::kForward)).scale(0));
  CHECK(grouped(k, {0, 0}, 2048, 7168, GemmPart::kForward) == doctest::Approx(k.launch_gap().value()).scale(0));
}
