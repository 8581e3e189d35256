// Memory-check speed: per-layout memory evaluations per second on one core, the check the planner
// runs on every candidate (issue 6, must-show 4). One evaluation = schedule::plan_stages + memory::
// rank_memory for every pipeline stage, the peak over the stages, and the comparison with the GPU's
// capacity. DeepSeek-V3 on 1,024 H100 (bench_scenarios.hpp), cycling through 12 layouts (pp, vpp,
// ep, micro-batch size, recompute) so that consecutive evaluations never repeat. Target: >= 100,000/s.
// Usage: build/bench/bench_memory [seconds]   (results go to docs/performance.md)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_scenarios.hpp"
#include "memory/rank_memory.hpp"
#include "schedule/stage_plan.hpp"

using namespace moesim;

namespace {

struct Variant {
  std::int64_t pp, vpp, ep, mbs;
  RecomputeGranularity recompute;
};

/// Layouts a planner would try for DeepSeek-V3 on 1,024 H100 at TP2; the first is NVIDIA's recipe.
std::vector<Scenario> layouts() {
  const Variant variants[] = {
      {8, 4, 64, 1, RecomputeGranularity::kNone},      {8, 4, 64, 2, RecomputeGranularity::kSelective},
      {16, 2, 32, 1, RecomputeGranularity::kNone},     {16, 1, 64, 1, RecomputeGranularity::kFull},
      {8, 1, 32, 1, RecomputeGranularity::kSelective}, {4, 4, 128, 1, RecomputeGranularity::kNone},
      {8, 2, 16, 2, RecomputeGranularity::kFull},      {16, 3, 8, 1, RecomputeGranularity::kSelective},
      {4, 1, 64, 2, RecomputeGranularity::kFull},      {8, 4, 128, 1, RecomputeGranularity::kSelective},
      {16, 2, 64, 2, RecomputeGranularity::kNone},     {8, 1, 64, 1, RecomputeGranularity::kNone},
  };
  std::vector<Scenario> out;
  for (const Variant& v : variants) {
    Scenario s = bench::deepseek_v3_on_1024_h100();
    s.parallel.pp = v.pp;
    s.parallel.vpp = v.vpp;
    s.parallel.ep = v.ep;
    s.parallel.dp = s.system.gpus / (s.parallel.tp * v.pp);
    s.training.micro_batch_size = v.mbs;
    s.recompute.granularity = v.recompute;
    if (v.recompute == RecomputeGranularity::kSelective) {
      s.recompute.modules = {RecomputeModule::kCoreAttn, RecomputeModule::kMoeAct, RecomputeModule::kLayernorm};
    }
    validate_layout(s);
    out.push_back(std::move(s));
  }
  return out;
}

/// The planner-facing check for one candidate: does the most loaded rank of every stage fit?
bool fits(const Scenario& s, double& peak_bytes) {
  const std::vector<schedule::StageLayers> stages = schedule::plan_stages(s);
  double peak = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const double total = memory::rank_memory(s, static_cast<std::int64_t>(i), stages[i]).total_bytes();
    peak = total > peak ? total : peak;
  }
  peak_bytes = peak;
  return peak <= s.system.gpu.hbm_capacity.value();
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const std::vector<Scenario> candidates = layouts();

  using clock = std::chrono::steady_clock;
  double checksum = 0;
  long evaluations = 0, fitting = 0;
  const auto start = clock::now();
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 120; ++i) {
      double peak = 0;
      fitting += fits(candidates[static_cast<std::size_t>(i) % candidates.size()], peak) ? 1 : 0;
      checksum += peak * 1e-9;
      ++evaluations;
    }
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  }
  std::printf("bench_memory: DeepSeek-V3 on 1024 H100, TP2, %zu layouts cycled (pp 4-16, vpp 1-4, ep 8-128, mbs 1-2, "
              "recompute none/selective/full)\n",
              candidates.size());
  std::printf("  %ld evaluations in %.2f s: %.0f evaluations/s on one core (%.2f us each)\n", evaluations, elapsed,
              static_cast<double>(evaluations) / elapsed, 1e6 * elapsed / static_cast<double>(evaluations));
  std::printf("  (%ld fit; checksum %.6f)\n", fitting, checksum);
  return 0;
}
