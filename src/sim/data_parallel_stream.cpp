#include "sim/step_simulation.hpp"

#include <algorithm>

namespace moesim::sim::detail {

void StepSimulation::flush_buckets(std::int64_t st, bool partial) {
  RankState& r = rank(st);
  const Op op = s_.optimizer.distributed ? Op::kReduceScatter : Op::kAllReduce;
  auto flush = [&](double& bucket, bool expert) {
    const double size = program::ddp_bucket_params(dp_ranks(expert));
    while (bucket >= size || (partial && bucket > 0)) {
      const double take = std::min(bucket, size);
      enqueue_dp(st, {op, expert, take, -1});
      if (expert && replica_share_ > 0) enqueue_dp(st, {Op::kAllReduce, true, take * replica_share_, -1, true});
      bucket -= take;
    }
  };
  flush(r.dense_bucket, false);
  flush(r.expert_bucket, true);
}

void StepSimulation::issue_parameter_gathers(std::int64_t st) {
  if (!s_.optimizer.distributed || !s_.optimizer.overlap_param_gather) return;
  RankState& r = rank(st);
  for (std::size_t c = 0; c < r.chunks.size(); ++c) enqueue_gathers(st, static_cast<std::int32_t>(c));
}

void StepSimulation::enqueue_gathers(std::int64_t st, std::int32_t chunk) {
  RankState& r = rank(st);
  const schedule::RankParams& p = chunk >= 0 ? r.chunks[static_cast<std::size_t>(chunk)].params
                                             : params_[static_cast<std::size_t>(r.stage)];
  for (bool expert : {false, true}) {
    double left = expert ? p.expert : p.dense;
    if (dp_ranks(expert) <= 1) continue;
    const double size = program::ddp_bucket_params(dp_ranks(expert));
    while (left > 0) {
      const double take = std::min(left, size);
      if (chunk >= 0) {
        ++r.gathers_pending[static_cast<std::size_t>(chunk)];
        ++r.gathers_total[static_cast<std::size_t>(chunk)];
      }
      enqueue_dp(st, {Op::kAllGather, expert, take, chunk});
      left -= take;
    }
  }
}

void StepSimulation::enqueue_dp(std::int64_t st, DpJob job) {
  if (dp_ranks(job.expert) <= 1 && !job.replicas) return;
  rank(st).dp_queue.push_back(job);
  start_next_dp(st);
}

void StepSimulation::start_next_dp(std::int64_t st) {
  RankState& r = rank(st);
  if (r.dp_busy || r.dp_queue.empty()) return;
  const DpJob job = r.dp_queue.front();
  r.dp_queue.pop_front();
  r.dp_busy = true;
  const collective::GroupPlacement g =
      job.replicas ? program::replica_group(costs_.groups()) : (job.expert ? costs_.groups().edp : costs_.groups().dp);
  const double per_param =
      job.op == Op::kAllGather ? program::param_gather_bytes_per_param(s_) : program::grad_reduce_bytes_per_param(s_);
  const double bytes = job.params * per_param;
  const double t = costs_.collectives().time(job.op, Bytes(bytes), g).value();
  const double latency = costs_.collectives().latency(job.op, g).value();
  const SimTime start = queue_.now();
  ports_.transfer(st, PortNetwork::tier_of(g), Direction::kBoth, t, latency, start,
                  [this, st, job, start, bytes](engine::FlowId, SimTime) {
                    if (tracks_) {
                      tracks_->transfer(static_cast<std::size_t>(st), Track::kDp, dp_name(job), start,
                                        queue_.now(), bytes, -1, job.chunk, job.op != Op::kAllGather);
                    }
                    finish_dp(st, job);
                  });
}

void StepSimulation::finish_dp(std::int64_t st, const DpJob& job) {
  RankState& r = rank(st);
  r.dp_busy = false;
  if (job.op == Op::kAllGather && job.chunk >= 0) {
    auto& pending = r.gathers_pending[static_cast<std::size_t>(job.chunk)];
    --pending;
    const bool resumable = r.waiting_gather == job.chunk && r.pass < r.order.size() &&
                           !gather_blocked(r, r.order[r.pass], r.pass_started ? r.op : 0,
                                           ops_of(r, r.order[r.pass]).size());
    if (resumable) {
      r.waits.dp += seconds_of(queue_.now() - r.wait_since);
      r.waiting_gather = -1;
      start_next_dp(st);
      advance(st);
      return;
    }
  }
  start_next_dp(st);
  if (r.draining && !r.dp_busy && r.dp_queue.empty()) after_drain(st);
}

void StepSimulation::begin_drain(std::int64_t st) {
  RankState& r = rank(st);
  r.drain_started = true;
  r.draining = true;
  r.wait_since = queue_.now();
  if (!s_.optimizer.overlap_grad_reduce) {
    const schedule::RankParams& p = params_[static_cast<std::size_t>(r.stage)];
    r.dense_bucket = p.dense;
    r.expert_bucket = p.expert;
    flush_buckets(st, true);
  }
  if (!r.dp_busy && r.dp_queue.empty()) after_drain(st);
}

void StepSimulation::after_drain(std::int64_t st) {
  RankState& r = rank(st);
  r.draining = false;
  r.waits.dp += seconds_of(queue_.now() - r.wait_since);
  if (r.optimizer_done) {
    finish_rank(st);
    return;
  }
  const double t =
      program::optimizer_step_seconds(s_, costs_.kernels(), params_[static_cast<std::size_t>(r.stage)]);
  const SimTime start = queue_.now();
  queue_.schedule(start + engine::to_sim_time(Seconds(t)), kComputePriority, [this, st, start, t] {
    RankState& rr = rank(st);
    rr.optimizer_s += t;
    rr.optimizer_done = true;
    if (tracks_) tracks_->optimizer(static_cast<std::size_t>(st), start, queue_.now());
    if (s_.optimizer.distributed && !s_.optimizer.overlap_param_gather) {
      rr.draining = true;
      rr.wait_since = queue_.now();
      enqueue_gathers(st, -1);
      if (!rr.dp_busy && rr.dp_queue.empty()) after_drain(st);
      return;
    }
    finish_rank(st);
  });
}

void StepSimulation::finish_rank(std::int64_t st) {
  RankState& r = rank(st);
  r.finished = true;
  r.end = queue_.now();
}

}  // namespace moesim::sim::detail
