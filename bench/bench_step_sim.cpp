// Step-simulation speed (issue 4, must-show 4): DeepSeek-V3 on 1,024 H100 (TP2 PP8 VPP4 EP64,
// global batch 8192, seq 4096, balanced routing) simulated op by op on one core.
// Targets: <= 2 s wall and <= 2 GiB peak RSS balanced; with log-normal skew (σ = 1.0, every EP
// rank distinct: 8 × 64 = 512 ranks simulated) <= 20 s. Also reports events/s and the balanced
// run with the op-level timeline recorded (what `simulate --trace` pays).
// Usage: build/bench/bench_step_sim [repeats=3]   (results go to docs/performance.md)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "bench_scenarios.hpp"
#include "sim/step_simulator.hpp"

using namespace moesim;

namespace {
/// Peak resident set (VmHWM) in MiB, from /proc/self/status; 0 where that file does not exist.
double peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  const Scenario s = bench::deepseek_v3_on_1024_h100();
  using clock = std::chrono::steady_clock;
  std::printf("bench_step_sim: DeepSeek-V3 on 1024 H100 (TP2 PP8 VPP4 EP64, gbs 8192, seq 4096, balanced)\n");
  struct Case {
    const char* label;
    bool trace;
    bool skewed;
  };
  for (const Case& c : {Case{"balanced", false, false}, Case{"balanced+trace", true, false},
                        Case{"lognormal 1.0", false, true}}) {
    Scenario sc = s;
    if (c.skewed) {
      sc.moe.routing.distribution = RoutingDistribution::kLognormal;
      sc.moe.routing.lognormal_sigma = 1.0;
    }
    const bool trace = c.trace;
    double best = 1e30, total = 0;
    sim::SimOutput out;
    for (int i = 0; i < repeats; ++i) {
      sim::SimOptions o;
      o.record_timeline = trace;
      const auto start = clock::now();  // includes building the op programs and drawing the loads
      out = sim::simulate_step(sc, o);
      const double wall = std::chrono::duration<double>(clock::now() - start).count();
      best = std::min(best, wall);
      total += wall;
    }
    const auto& info = out.result.simulation;
    std::printf("  %-16s wall %.3f s mean of %d (best %.3f) · %lld ranks · %lld events (%.2f M events/s) · "
                "%lld flows · %zu timeline events · step %.4f s · imbalance %.3f · peak RSS %.0f MiB\n",
                c.label, total / repeats, repeats, best, static_cast<long long>(info.ranks_simulated),
                static_cast<long long>(info.events), static_cast<double>(info.events) / best / 1e6,
                static_cast<long long>(info.flows), out.timeline.events.size(), out.result.step_time_s,
                out.result.breakdown.moe_imbalance, peak_rss_mib());
  }
  return 0;
}
