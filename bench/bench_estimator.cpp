// Estimator speed: evaluations per second of DeepSeek-V3 on 1,024 H100 (TP2 PP8 VPP4 EP64,
// global batch 8192, seq 4096) on one core, with balanced routing (the target: issue 2, >= 10,000/s;
// issue 28 must-show 3, >= 23,900/s) and with log-normal σ = 1.2 routing (the skew-aware estimate the
// planner ranks with under skew: issue 30).
// Usage: build/bench/bench_estimator [seconds per case]   (results go to docs/performance.md)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench_scenarios.hpp"
#include "estimate/step_estimator.hpp"

using namespace moesim;

namespace {

void measure(const char* label, Scenario s, double seconds) {
  using clock = std::chrono::steady_clock;
  double checksum = 0;
  long evaluations = 0;
  const auto start = clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 100; ++i) {
      // Vary the micro-batch count so no call is a repeat the compiler could fold.
      s.training.global_batch_size = 8192 + 512 * (i % 4);
      checksum += estimate::estimate_step(s).step_time_s;
      ++evaluations;
    }
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  }
  std::printf("bench_estimator: DeepSeek-V3 on 1024 H100 (TP2 PP8 VPP4 EP64, gbs 8192, seq 4096), %s\n", label);
  std::printf("  %ld evaluations in %.2f s: %.0f evaluations/s on one core (%.1f us each)\n", evaluations, elapsed,
              static_cast<double>(evaluations) / elapsed, 1e6 * elapsed / static_cast<double>(evaluations));
  std::printf("  (checksum %.6f)\n", checksum);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  Scenario s = bench::deepseek_v3_on_1024_h100();
  measure("balanced routing", s, seconds);
  s.moe.routing.distribution = RoutingDistribution::kLognormal;
  s.moe.routing.lognormal_sigma = 1.2;
  measure("log-normal routing, sigma 1.2", s, seconds);
  return 0;
}
