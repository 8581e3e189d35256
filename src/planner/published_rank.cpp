#include "planner/published_rank.hpp"

#include <algorithm>

#include "estimate/step_estimator.hpp"
#include "memory/rank_memory.hpp"
#include "planner/search.hpp"
#include "planner/search_space.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::planner {
namespace {

bool same_recompute(const RecomputeSpec& a, const RecomputeSpec& b) {
  return a.granularity == b.granularity && (a.granularity != RecomputeGranularity::kSelective || a.modules == b.modules);
}

}  // namespace

LayoutRank rank_published_layout(const Scenario& published, int threads) {
  PlanRequest req;
  req.base = published;
  complete_space(req);
  SearchSpace& sp = req.space;
  const ParallelSpec& p = published.parallel;
  // The published value of every knob is part of the space, so the published layout is a candidate.
  sp.tp.push_back(p.tp);
  sp.cp.push_back(p.cp);
  sp.pp.push_back(p.pp);
  sp.vpp.push_back(p.vpp);
  sp.ep.push_back(p.ep);
  sp.etp.push_back(p.etp);
  sp.micro_batch_size.push_back(published.training.micro_batch_size);
  sp.dispatcher.push_back(published.moe.dispatcher);
  if (std::none_of(sp.recompute.begin(), sp.recompute.end(),
                   [&](const RecomputeSpec& r) { return same_recompute(r, published.recompute); })) {
    sp.recompute.push_back(published.recompute);
  }
  complete_space(req);  // sorts and deduplicates the lists just extended

  SearchOptions so;
  so.threads = threads;
  const SearchEvaluation ev = search(req, so);

  LayoutRank out;
  out.considered = ev.considered;
  const Result pub = estimate::estimate_step(published);
  out.published_step_time_s = pub.step_time_s;
  out.published_fits = pub.memory.fits;
  if (!pub.memory.fits) {
    out.published_detail = "moesim's memory model predicts " + std::to_string(pub.memory.peak_bytes / (1024.0 * 1024.0 * 1024.0)) +
                           " GiB against " + std::to_string(pub.memory.capacity_bytes / (1024.0 * 1024.0 * 1024.0)) + " GiB";
  }
  const double pub_score = objective_score(req, published.system.gpus, pub.step_time_s);
  std::int64_t faster = 0;
  bool published_among = false;
  for (const auto& f : ev.feasible) {
    const double score = objective_score(req, f.candidate.gpus, f.step_time_s);
    if (score > pub_score) ++faster;
    if (score == pub_score) published_among = true;  // the published layout itself (or an exact tie)
  }
  out.feasible = static_cast<std::int64_t>(ev.feasible.size()) + (published_among ? 0 : 1);
  out.rank = faster + 1;
  out.percentile = static_cast<double>(out.rank) / static_cast<double>(out.feasible);
  if (!ev.feasible.empty()) {
    out.best_step_time_s = ev.feasible.front().step_time_s;
    out.best_layout = describe(req, ev.feasible.front().candidate);
  }
  return out;
}

}  // namespace moesim::planner
