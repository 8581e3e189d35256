#include "planner/pareto.hpp"

#include <algorithm>

namespace moesim::planner {

std::vector<ParetoPoint> pareto_front(const PlanRequest& request, const std::vector<CandidateEstimate>& feasible) {
  const double tokens = static_cast<double>(request.base.training.global_batch_size * request.base.training.seq_length);
  const double capacity = request.base.system.gpu.hbm_capacity.value();
  std::vector<ParetoPoint> pts;
  pts.reserve(feasible.size());
  for (const auto& f : feasible) pts.push_back({f.candidate, tokens / f.step_time_s, capacity - f.peak_bytes});
  // Best throughput first; a point survives when no point before it has at least its headroom with
  // at most its GPUs (those are at least as fast, so they would dominate it).
  std::sort(pts.begin(), pts.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
    if (a.headroom_bytes != b.headroom_bytes) return a.headroom_bytes > b.headroom_bytes;
    if (a.candidate.gpus != b.candidate.gpus) return a.candidate.gpus < b.candidate.gpus;
    return a.candidate.index < b.candidate.index;
  });
  const std::vector<std::int64_t>& sizes = request.space.gpus;  // sorted, few
  std::vector<double> best_headroom(sizes.size(), -1e300);      // best so far among points with gpus == sizes[j]
  std::vector<ParetoPoint> front;
  for (const auto& p : pts) {
    bool dominated = false;
    for (std::size_t j = 0; j < sizes.size() && sizes[j] <= p.candidate.gpus; ++j) {
      if (best_headroom[j] >= p.headroom_bytes) dominated = true;
    }
    if (dominated) continue;
    front.push_back(p);
    const auto j = static_cast<std::size_t>(std::lower_bound(sizes.begin(), sizes.end(), p.candidate.gpus) - sizes.begin());
    if (j < sizes.size()) best_headroom[j] = std::max(best_headroom[j], p.headroom_bytes);
  }
  std::sort(front.begin(), front.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    if (a.candidate.gpus != b.candidate.gpus) return a.candidate.gpus < b.candidate.gpus;
    if (a.tokens_per_s != b.tokens_per_s) return a.tokens_per_s > b.tokens_per_s;
    return a.candidate.index < b.candidate.index;
  });
  return front;
}

}  // namespace moesim::planner
