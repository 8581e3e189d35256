#include "planner/search.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <fmt/format.h>

#include "core/error.hpp"
#include "estimate/step_estimator.hpp"
#include "memory/rank_memory.hpp"
#include "planner/search_space.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::planner {

double objective_score(const PlanRequest& request, std::int64_t gpus, double step_time_s) {
  const double tokens = static_cast<double>(request.base.training.global_batch_size * request.base.training.seq_length);
  const double tokens_per_s = step_time_s > 0 ? tokens / step_time_s : 0.0;
  return request.objective == PlanObjective::kTokensPerGpuHour ? tokens_per_s / static_cast<double>(gpus) : tokens_per_s;
}

CandidateOutcome evaluate_candidate(const PlanRequest& request, const Candidate& c) {
  CandidateOutcome out;
  const Scenario s = scenario_for(request, c);
  // TP exchanges activations twice per layer and per micro-batch: Megatron keeps it inside one
  // NVLink domain, and so does every published recipe.
  const std::int64_t domain = s.system.nvlink_domain_size;
  if (domain > 0 && c.tp > domain) {
    out.reason = "topology: tp spans NVLink domains";
    out.detail = fmt::format("tp {} exceeds the NVLink domain of {} GPUs ({})", c.tp, domain, s.system.name);
    return out;
  }
  try {
    validate_layout(s);
  } catch (const InputError& e) {
    out.reason = e.json_path() == "/precision" ? "precision unsupported by the GPU" : "layout rule at " + e.json_path();
    out.detail = e.what();
    return out;
  }
  const auto stages = schedule::plan_stages(s);
  const auto peak_of = [&](const Scenario& sc, double& peak, std::int64_t& stage) {
    for (std::size_t k = 0; k < stages.size(); ++k) {
      const double bytes = memory::rank_memory(sc, static_cast<std::int64_t>(k), stages[k]).total_bytes();
      if (bytes > peak) {
        peak = bytes;
        stage = static_cast<std::int64_t>(k);
      }
    }
  };
  peak_of(s, out.peak_bytes, out.peak_stage);
  // A layout fits when its predicted peak leaves the request's headroom free.
  const double capacity = s.system.gpu.hbm_capacity.value() - request.memory_headroom_bytes();
  Candidate chosen = c;
  std::optional<Scenario> offloaded;  // the candidate's scenario with the planner's offloading, when it needs it

  // A layout that does not fit may fit with activations offloaded to the host (Megatron's
  // fine-grained offloading), when the scenario offloads nothing itself and full recompute has not
  // already left nothing to offload: the planner tries it and says so (Candidate::offload).
  if (out.peak_bytes > capacity && s.offload.activations.empty() &&
      s.recompute.granularity != RecomputeGranularity::kFull) {
    Candidate rescued = c;
    rescued.offload = true;
    Scenario trial = scenario_for(request, rescued);
    double peak = 0;
    std::int64_t stage = 0;
    peak_of(trial, peak, stage);
    if (peak <= capacity) {
      chosen = rescued;
      offloaded = std::move(trial);
      out.peak_bytes = peak;
      out.peak_stage = stage;
    }
  }
  if (out.peak_bytes > capacity) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    out.reason = fmt::format("out of memory on stage {}", out.peak_stage);
    out.detail = fmt::format("needs {:.1f} GiB on pipeline stage {}; capacity {:.1f} GiB less {:.1f} GiB of headroom",
                             out.peak_bytes / kGiB, out.peak_stage, s.system.gpu.hbm_capacity.value() / kGiB,
                             request.memory_headroom_gib);
    out.memory_only = true;
    return out;
  }
  // The memory verdict above is the memory model already; the estimate only adds the time. Under
  // skewed routing the estimate computes the layout's expert loads, which a device limit over too
  // many NVLink domains makes too costly to enumerate: that layout is refused, as simulate refuses it.
  Result r;
  try {
    r = estimate::estimate_step(offloaded ? *offloaded : s, {.memory = false});
  } catch (const InputError& e) {
    out.reason = "scenario rule at " + e.json_path();
    out.detail = e.what();
    return out;
  }
  out.feasible = true;
  out.estimate.candidate = chosen;
  out.estimate.step_time_s = r.step_time_s;
  out.estimate.peak_bytes = out.peak_bytes;
  out.estimate.peak_stage = out.peak_stage;
  return out;
}

namespace {

// Folds one candidate's outcome into the search. Called in enumeration order, it keeps each
// rejection reason's lowest-index example and the first smallest footprint, whatever the blocks.
void absorb(SearchEvaluation& ev, const Candidate& c, CandidateOutcome& o, double capacity) {
  ++ev.considered;
  if (o.feasible) {
    ev.feasible.push_back(o.estimate);
    return;
  }
  auto it = std::find_if(ev.rejections.begin(), ev.rejections.end(), [&](const Rejection& r) { return r.reason == o.reason; });
  if (it == ev.rejections.end()) {
    ev.rejections.push_back({o.reason, 0, c, o.detail});
    it = ev.rejections.end() - 1;
  }
  ++it->count;
  if (o.memory_only && (!ev.smallest.present || o.peak_bytes < ev.smallest.peak_bytes)) {
    ev.smallest = {true, c, o.peak_bytes, o.peak_stage, capacity};
  }
}

// Best first; the candidate index breaks ties, so the order is total and does not depend on how the
// list was built.
void sort_feasible(const PlanRequest& request, SearchEvaluation& ev) {
  std::sort(ev.feasible.begin(), ev.feasible.end(), [&](const CandidateEstimate& a, const CandidateEstimate& b) {
    const double sa = objective_score(request, a.candidate.gpus, a.step_time_s);
    const double sb = objective_score(request, b.candidate.gpus, b.step_time_s);
    if (sa != sb) return sa > sb;
    return a.candidate.index < b.candidate.index;
  });
}

}  // namespace

SearchRun run_search(const PlanRequest& request, const SearchOptions& options) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
    throw InputError("--shard", fmt::format("{}/{}", options.shard, options.shards), "shard i/N needs 0 <= i < N",
                     "0/1 … N-1/N");
  }
  std::vector<Candidate> mine;
  for (const auto& c : enumerate_candidates(request)) {
    if (c.index % options.shards == options.shard) mine.push_back(c);
  }
  SearchRun run;
  run.total = static_cast<std::int64_t>(mine.size());
  SearchEvaluation& ev = run.evaluation;
  ev.shard = options.shard;
  ev.shards = options.shards;
  if (options.resume != nullptr) {
    const SearchEvaluation& r = *options.resume;
    if (r.shard != options.shard || r.shards != options.shards) {
      throw InputError("/search/shard", fmt::format("{}/{}", r.shard, r.shards), "the checkpoint is of another shard",
                       fmt::format("{}/{}", options.shard, options.shards));
    }
    if (r.considered > run.total) {
      throw InputError("/search/considered", std::to_string(r.considered),
                       "the checkpoint covers more candidates than this shard has", "at most " + std::to_string(run.total));
    }
    ev = r;
  }
  const double capacity = request.base.system.gpu.hbm_capacity.value();
  const int threads = resolve_threads(options.threads);
  // Blocks short enough (well under a second) that a stop request or a checkpoint comes soon.
  const std::int64_t block = std::max<std::int64_t>(256, 128 * static_cast<std::int64_t>(threads));
  using Clock = std::chrono::steady_clock;
  auto last_checkpoint = Clock::now();
  auto save = [&] {
    SearchEvaluation so_far = ev;
    sort_feasible(request, so_far);
    options.checkpoint(so_far, run.total);
    last_checkpoint = Clock::now();
  };
  std::vector<CandidateOutcome> outcomes;
  while (ev.considered < run.total) {
    if (options.stop_requested && options.stop_requested()) {
      if (options.checkpoint) save();
      break;
    }
    const std::int64_t first = ev.considered;
    const std::int64_t n = std::min(block, run.total - first);
    outcomes.assign(static_cast<std::size_t>(n), CandidateOutcome{});
    parallel_for(n, threads, [&](std::int64_t i) {
      outcomes[static_cast<std::size_t>(i)] = evaluate_candidate(request, mine[static_cast<std::size_t>(first + i)]);
    });
    for (std::int64_t i = 0; i < n; ++i) {
      absorb(ev, mine[static_cast<std::size_t>(first + i)], outcomes[static_cast<std::size_t>(i)], capacity);
    }
    if (options.progress) options.progress("searching", ev.considered, run.total);
    const std::chrono::duration<double> since = Clock::now() - last_checkpoint;
    if (options.checkpoint && ev.considered < run.total && since.count() >= options.checkpoint_every_s) save();
  }
  sort_feasible(request, ev);
  return run;
}

SearchEvaluation search(const PlanRequest& request, const SearchOptions& options) {
  SearchOptions o = options;
  o.stop_requested = nullptr;
  return run_search(request, o).evaluation;
}

}  // namespace moesim::planner
