// Planner speed (issue 7 must-show 1): the whole `moesim plan --model deepseek-v3 --system hgx-h100
// --gpus 1024 --seq 4096 --global-batch 8192` — enumeration, pruning, estimates, the simulated
// finalists and the skew sensitivity of the top 3 — on every core. Target: <= 60 s on 2 cores with
// >= 5,000 candidates considered.
// Usage: build/bench/bench_planner [threads=0 (all)] [skew=1]   (results go to docs/performance.md)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "config/plan_loader.hpp"
#include "planner/planner.hpp"
#include "planner/search_space.hpp"

using namespace moesim;

namespace {
long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const bool skew = argc > 2 ? std::atoi(argv[2]) != 0 : true;
  PlanRequest req;
  req.base = config::plan_question_from_flags("deepseek-v3", "hgx-h100", 1024, 4096, 8192).scenario;
  req.skew_sensitivity = skew;
  planner::PlanOptions po;
  po.threads = threads;
  const auto start = std::chrono::steady_clock::now();
  const Plan plan = planner::make_plan(req, po);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("bench_planner: DeepSeek-V3 on 1024 H100, seq 4096, global batch 8192, threads %d (hardware %u), skew %s\n",
              threads, std::thread::hardware_concurrency(), skew ? "on" : "off");
  std::printf("  %lld candidates, %lld fit, %zu ranked rows; wall %.1f s; peak RSS %.0f MiB\n",
              static_cast<long long>(plan.considered), static_cast<long long>(plan.feasible), plan.rows.size(), wall,
              static_cast<double>(peak_rss_kib()) / 1024.0);
  std::printf("  winner: %s, %.3f s per step (simulated)\n", planner::describe(plan.request, plan.rows.front().estimate.candidate).c_str(),
              plan.rows.front().result.step_time_s);
  return 0;
}
