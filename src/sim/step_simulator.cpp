#include "sim/step_simulator.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/event_queue.hpp"
#include "engine/flow_network.hpp"
#include "estimate/data_parallel.hpp"
#include "estimate/layer_cost.hpp"
#include "estimate/result_common.hpp"
#include "moe/expert_loads.hpp"
#include "moe/placement.hpp"
#include "schedule/pipeline_schedule.hpp"
#include "sim/chunk_program.hpp"
#include "sim/port_network.hpp"
#include "sim/sim_tracks.hpp"

namespace moesim::sim {
namespace {

using collective::Op;
using engine::SimTime;
using estimate::LayerOp;
using estimate::OpKind;
using schedule::PipelinePass;

// Compute events run before flow completions at the same instant, so a rank that finishes a
// kernel and a transfer at once sees both.
constexpr int kComputePriority = 1;

double seconds_of(SimTime t) { return engine::to_seconds(t).value(); }

/// A data-parallel collective of one gradient or parameter bucket.
struct DpJob {
  Op op = Op::kReduceScatter;
  bool expert = false;
  double params = 0;
  std::int32_t chunk = -1;  ///< parameter all-gathers: the chunk whose forward waits for it
};

/// Blocked-time accounting of one rank, by category (seconds).
struct Waits {
  double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0, bubble = 0;
  [[nodiscard]] double comm() const { return tp + cp + ep + pp + dp; }
};

/// Ranks of one EP group that have reached the same EP collective, and how many finished it.
struct EpBarrier {
  std::vector<std::pair<std::int64_t, SimTime>> members;  ///< (rank index, arrival)
  std::int64_t done = 0;
};

struct RankState {
  std::int64_t stage = 0;
  std::int64_t ep_index = 0;  ///< position in the stage's EP group (0 when EP ranks are replicated)
  std::int64_t global_rank = 0;
  std::int64_t ep_collectives = 0;  ///< EP collectives started so far (their barrier sequence number)
  std::vector<PipelinePass> order;
  std::vector<ChunkProgram> chunks;
  std::size_t pass = 0;     ///< index into order
  std::size_t op = 0;       ///< next op of the current pass
  bool pass_started = false;
  bool finished = false;
  // Pipeline receives: arrival time per (direction, chunk, micro-batch), kNever until it lands.
  std::vector<SimTime> arrival, send_start;
  std::int64_t waiting_for = -1;  ///< arrival slot this rank is blocked on, -1 if none
  SimTime wait_since = 0;
  // Data parallelism: a FIFO of bucket collectives on the DP stream.
  std::deque<DpJob> dp_queue;
  bool dp_busy = false;
  double dense_bucket = 0, expert_bucket = 0;
  std::vector<std::int32_t> gathers_pending;  ///< parameter all-gathers outstanding per chunk
  std::int32_t waiting_gather = -1;           ///< chunk whose all-gather this rank is blocked on
  bool drain_started = false;
  bool draining = false;                      ///< after the last pass: waiting for the DP stream to empty
  bool optimizer_done = false;
  // Accounting.
  double compute_s = 0, optimizer_s = 0;
  Waits waits;
  SimTime end = 0;
  std::int64_t pending_trace_flow = -1;  ///< send event whose arrow ends at this rank's next event
};

class StepSimulation {
 public:
  StepSimulation(const Scenario& s, const SimOptions& options)
      : s_(s), options_(options), costs_(s), stages_(schedule::plan_stages(s)),
        params_(schedule::rank_params(s, stages_)),
        loads_(s.moe.routing, std::max<std::int64_t>(s.model.num_moe_experts, 1),
               std::max<std::int64_t>(s.model.moe_router_topk, 1), s.seed),
        ports_(queue_, s.system, ranks_to_simulate(s)) {
    const auto& p = s.parallel;
    m_ = s.num_microbatches();
    vpp_ = p.vpp;
    // Activations (forward) and their gradients (backward) crossing a stage boundary: one
    // micro-batch of the rank's sequence slice, sequence-parallel-sharded over TP, 16-bit.
    boundary_bytes_ = static_cast<double>(s.training.micro_batch_size * s.training.seq_length / p.cp *
                                          s.model.hidden_size) *
                      2.0 / (p.sequence_parallel ? static_cast<double>(p.tp) : 1.0);
    // Under balanced routing every rank of a stage runs the same ops at the same times, so one
    // stands for all; under skew the EP ranks of a stage differ and each is simulated.
    ep_sim_ = (s.model.is_moe() && !loads_.balanced()) ? p.ep : 1;
    const std::int64_t per_stage = s.system.gpus / p.pp;
    ranks_.resize(static_cast<std::size_t>(p.pp * ep_sim_));
    for (std::int64_t st = 0; st < p.pp; ++st) {
      const std::vector<ChunkProgram> programs = build_chunk_programs(s, costs_, stages_[static_cast<std::size_t>(st)]);
      const std::vector<PipelinePass> order = schedule::pipeline_order(st, p.pp, p.vpp, m_);
      for (std::int64_t j = 0; j < ep_sim_; ++j) {
        RankState& r = rank(index_of(st, j));
        r.stage = st;
        r.ep_index = j;
        // Expert grid etp-ep-edp-pp: EP rank j of the stage's first expert-DP replica.
        r.global_rank = st * per_stage + j * p.etp;
        r.order = order;
        r.chunks = programs;
        r.arrival.assign(static_cast<std::size_t>(2 * vpp_ * m_), engine::kNever);
        r.send_start.assign(r.arrival.size(), engine::kNever);
        r.gathers_pending.assign(static_cast<std::size_t>(vpp_), 0);
        global_ranks_.push_back(r.global_rank);
      }
    }
    barriers_.resize(static_cast<std::size_t>(p.pp));
    if (options_.record_timeline) tracks_ = std::make_unique<TrackRecorder>(timeline_, ranks_.size());
  }

  SimOutput run() {
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(ranks_.size()); ++i) {
      queue_.schedule(0, kComputePriority, [this, i] {
        issue_parameter_gathers(i);
        advance(i);
      });
    }
    queue_.run();
    for (const RankState& r : ranks_) {
      if (!r.finished) {
        throw InternalError(fmt::format(
            "step simulation stalled: stage {} EP rank {} stopped at pass {} of {} (waiting for slot {}, gather {}); "
            "the pipeline schedule has a dependency cycle",
            r.stage, r.ep_index, r.pass, r.order.size(), r.waiting_for, r.waiting_gather));
      }
    }
    return finish();
  }

 private:
  static std::int64_t ranks_to_simulate(const Scenario& s) {
    const bool skewed = s.model.is_moe() && s.moe.routing.distribution != RoutingDistribution::kBalanced;
    return s.parallel.pp * (skewed ? s.parallel.ep : 1);
  }
  std::int64_t index_of(std::int64_t stage, std::int64_t ep_index) const { return stage * ep_sim_ + ep_index; }
  RankState& rank(std::int64_t i) { return ranks_[static_cast<std::size_t>(i)]; }

  /// Tokens routed to each EP rank of a stage relative to the mean, for (routing layer, micro-batch).
  const std::vector<double>& load_factors(std::int32_t layer, std::int32_t microbatch) {
    const auto key = (static_cast<std::int64_t>(layer) << 32) | static_cast<std::uint32_t>(microbatch);
    auto it = load_cache_.find(key);
    if (it != load_cache_.end()) return it->second;
    const auto& p = s_.parallel;
    // Each EP rank routes its sequence-parallel slice of the micro-batch.
    const std::int64_t tokens_per_rank =
        s_.training.micro_batch_size * s_.training.seq_length / p.cp / (p.sequence_parallel ? p.tp : 1);
    std::vector<double> experts = loads_.expert_tokens(tokens_per_rank * p.ep, layer, microbatch);
    if (s_.moe.capacity_factor) {
      dropped_ += moe::apply_capacity(experts, *s_.moe.capacity_factor);
    }
    std::vector<double> loads = options_.redundant_experts_per_rank >= 0
                                    ? moe::placed_rank_loads(experts, placement_of(layer, tokens_per_rank))
                                    : moe::rank_loads(experts, p.ep);
    // Relative to the balanced share, so dropped copies also shorten the expert work.
    const double mean = static_cast<double>(tokens_per_rank * s_.model.moe_router_topk);
    for (double& l : loads) l = mean > 0 ? l / mean : 1.0;
    const double worst = moe::imbalance(loads);
    imbalance_sum_ += worst;
    imbalance_max_ = std::max(imbalance_max_, worst);
    ++imbalance_draws_;
    return load_cache_.emplace(key, std::move(loads)).first->second;
  }

  /// EPLB re-places a layer's experts from the loads it expects (its popularity), not from one
  /// micro-batch's draw, as the balancer works from accumulated statistics.
  const moe::ExpertPlacement& placement_of(std::int32_t layer, std::int64_t tokens_per_rank) {
    auto it = placements_.find(layer);
    if (it != placements_.end()) return it->second;
    std::vector<double> expected = loads_.popularity(layer);
    const double copies = static_cast<double>(tokens_per_rank * s_.parallel.ep * s_.model.moe_router_topk);
    for (double& x : expected) x *= copies;
    return placements_
        .emplace(layer, moe::balanced_placement(expected, s_.parallel.ep, options_.redundant_experts_per_rank))
        .first->second;
  }

  /// The factor by which an op's cost follows this rank's expert load: the expert block's kernels
  /// (named expert_*) and the EP collectives scale with the tokens the rank receives.
  double load_factor(const RankState& r, const PipelinePass& pass, std::size_t op_index) {
    if (ep_sim_ == 1) return 1.0;
    const ChunkProgram& c = r.chunks[static_cast<std::size_t>(pass.chunk)];
    const std::int32_t layer = (pass.backward ? c.backward_layer : c.forward_layer)[op_index];
    if (layer < 0) return 1.0;
    const LayerOp& op = ops_of(r, pass)[op_index];
    const bool expert_op = op.kind == OpKind::kCompute && std::string_view(op.name).starts_with("expert_");
    if (!expert_op && op.group != estimate::CommGroup::kEp) return 1.0;
    return load_factors(layer, pass.microbatch)[static_cast<std::size_t>(r.ep_index)];
  }

  std::size_t slot(const PipelinePass& p) const {
    return static_cast<std::size_t>(((p.backward ? 1 : 0) * vpp_ + p.chunk) * m_ + p.microbatch);
  }

  const std::vector<LayerOp>& ops_of(const RankState& r, const PipelinePass& p) const {
    const ChunkProgram& c = r.chunks[static_cast<std::size_t>(p.chunk)];
    return p.backward ? c.backward : c.forward;
  }

  // ---- the compute stream -------------------------------------------------------------------

  /// Runs rank `st` as far as it can at the current time: starts its next op, or blocks.
  void advance(std::int64_t st) {
    RankState& r = rank(st);
    while (r.pass < r.order.size()) {
      const PipelinePass& pass = r.order[r.pass];
      if (!r.pass_started) {
        if (!ready_to_start(st, pass)) return;
        r.pass_started = true;
      }
      const std::vector<LayerOp>& ops = ops_of(r, pass);
      while (r.op < ops.size() && ops[r.op].seconds <= 0) on_op_done(st, pass, r.op++);
      if (r.op < ops.size()) {
        if (ops[r.op].kind == OpKind::kCompute) {
          run_kernels(st, pass);
        } else {
          start_comm(st, pass, ops[r.op]);
        }
        return;
      }
      if (end_pass(st, pass)) return;  // a blocking send holds the rank
    }
    if (!r.drain_started) begin_drain(st);
  }

  /// Whether the pass's input has arrived (and, for a chunk's first forward, its parameters).
  bool ready_to_start(std::int64_t st, const PipelinePass& pass) {
    RankState& r = rank(st);
    if (!pass.backward && r.gathers_pending[static_cast<std::size_t>(pass.chunk)] > 0) {
      r.waiting_gather = pass.chunk;
      r.wait_since = queue_.now();
      return false;
    }
    const schedule::PassSource src = schedule::pass_source(pass, r.stage, s_.parallel.pp, vpp_);
    if (!src.exists) return true;
    const std::size_t k = slot(pass);
    if (r.arrival[k] > queue_.now()) {
      r.waiting_for = static_cast<std::int64_t>(k);
      r.wait_since = queue_.now();
      return false;
    }
    return true;
  }

  /// Runs consecutive kernels as one event (they hold the compute stream back to back), stopping
  /// after a unit whose gradients become ready so the DP hooks fire on time.
  void run_kernels(std::int64_t st, const PipelinePass& pass) {
    RankState& r = rank(st);
    const std::vector<LayerOp>& ops = ops_of(r, pass);
    const ChunkProgram& chunk = r.chunks[static_cast<std::size_t>(pass.chunk)];
    const std::size_t first = r.op;
    std::size_t end = first;
    SimTime t = queue_.now();
    while (end < ops.size() && ops[end].kind == OpKind::kCompute) {
      const LayerOp& op = ops[end];
      const SimTime d = op.seconds > 0 ? engine::to_sim_time(Seconds(op.seconds * load_factor(r, pass, end))) : 0;
      if (tracks_ && d > 0) record_trace(st, op, t, t + d, pass);
      t += d;
      const bool mark = pass.backward && chunk.backward_marks[end];
      ++end;
      if (mark) break;
    }
    const SimTime start = queue_.now();
    queue_.schedule(t, kComputePriority, [this, st, first, end, start] {
      RankState& rr = rank(st);
      rr.compute_s += seconds_of(queue_.now() - start);
      const PipelinePass& p = rr.order[rr.pass];
      for (std::size_t i = first; i < end; ++i) on_op_done(st, p, i);
      rr.op = end;
      advance(st);
    });
  }

  void record_trace(std::int64_t st, const LayerOp& op, SimTime start, SimTime end, const PipelinePass& pass) {
    RankState& r = rank(st);
    const std::int64_t ev = tracks_->layer_op(static_cast<std::size_t>(st), op, start, end, pass);
    if (r.pending_trace_flow >= 0) {
      tracks_->arrow(r.pending_trace_flow, ev);
      r.pending_trace_flow = -1;
    }
  }

  /// A blocking collective of the layer. With distinct EP ranks an EP collective is a barrier: it
  /// starts when the last rank of the group reaches it and ends for all when the most loaded
  /// rank's traffic is through.
  void start_comm(std::int64_t st, const PipelinePass& pass, const LayerOp& op) {
    RankState& r = rank(st);
    const SimTime now = queue_.now();
    if (op.group == estimate::CommGroup::kEp && ep_sim_ > 1) {
      EpBarrier& b = barriers_[static_cast<std::size_t>(r.stage)][r.ep_collectives++];
      b.members.push_back({st, now});
      if (static_cast<std::int64_t>(b.members.size()) < ep_sim_) return;
      const std::int64_t seq = r.ep_collectives - 1;
      for (const auto& [member, arrived] : b.members) {
        RankState& m = rank(member);
        const PipelinePass& mp = m.order[m.pass];
        const double scale = load_factor(m, mp, m.op);
        ports_.transfer(member, PortNetwork::tier_of(group_of(op.group)), Direction::kBoth,
                        op.latency_s + (op.seconds - op.latency_s) * scale, op.latency_s, now,
                        [this, stage = r.stage, seq](engine::FlowId, SimTime) { barrier_flow_done(stage, seq); });
      }
      return;
    }
    const collective::GroupPlacement& g = group_of(op.group);
    ports_.transfer(st, PortNetwork::tier_of(g), Direction::kBoth, op.seconds, op.latency_s, now,
                    [this, st, now](engine::FlowId, SimTime) { finish_comm(st, now); });
    (void)pass;
  }

  void barrier_flow_done(std::int64_t stage, std::int64_t seq) {
    auto& stage_barriers = barriers_[static_cast<std::size_t>(stage)];
    auto it = stage_barriers.find(seq);
    EpBarrier& b = it->second;
    if (++b.done < ep_sim_) return;
    const auto members = std::move(b.members);
    stage_barriers.erase(it);
    for (const auto& [member, arrived] : members) finish_comm(member, arrived);
  }

  void finish_comm(std::int64_t st, SimTime start) {
    RankState& r = rank(st);
    const PipelinePass& pass = r.order[r.pass];
    const LayerOp& op = ops_of(r, pass)[r.op];
    const double took = seconds_of(queue_.now() - start);
    switch (op.kind) {
      case OpKind::kCompute: r.compute_s += took; break;
      case OpKind::kTpComm: r.waits.tp += took; break;
      case OpKind::kCpComm: r.waits.cp += took; break;
      case OpKind::kEpComm: r.waits.ep += took; break;
    }
    if (tracks_) record_trace(st, op, start, queue_.now(), pass);
    on_op_done(st, pass, r.op++);
    advance(st);
  }

  /// Gradient hooks: in a chunk's last backward, finished units fill DP buckets.
  void on_op_done(std::int64_t st, const PipelinePass& pass, std::size_t op_index) {
    if (!pass.backward || pass.microbatch != m_ - 1) return;
    RankState& r = rank(st);
    if (!s_.optimizer.overlap_grad_reduce) return;
    const ChunkProgram& c = r.chunks[static_cast<std::size_t>(pass.chunk)];
    for (const GradientsReady& g : c.gradients_ready) {
      if (g.after_op != op_index) continue;
      r.dense_bucket += g.params.dense;
      r.expert_bucket += g.params.expert;
      flush_buckets(st, false);
    }
    if (op_index + 1 == c.backward.size()) flush_buckets(st, true);  // a chunk's buckets never span chunks
  }

  /// Ends a pass: sends its output to the rank that needs it. Returns true when the send blocks.
  bool end_pass(std::int64_t st, const PipelinePass& pass) {
    RankState& r = rank(st);
    const auto dest = destination(pass, st);
    r.pass_started = false;
    r.op = 0;
    ++r.pass;
    if (!dest) return false;
    const auto [to_stage, to_pass] = *dest;
    const std::int64_t to = index_of(to_stage, r.ep_index);
    RankState& receiver = rank(to);
    const std::size_t k = slot(to_pass);
    const SimTime start = queue_.now();
    receiver.send_start[k] = start;
    const double t = collective::collective_time(s_.system, Op::kSendRecv, Bytes(boundary_bytes_),
                                                 costs_.groups().pp).value();
    const double latency = collective::collective_time(s_.system, Op::kSendRecv, Bytes(1), costs_.groups().pp).value();
    // 1F1B exchanges activations with blocking batched send/recv; the interleaved schedule overlaps
    // them with compute (overlap_p2p_comm, as Megatron's recipes run it).
    const bool blocking = vpp_ == 1;
    ports_.transfer(st, PortNetwork::tier_of(costs_.groups().pp), Direction::kOut, t, latency, start,
                    [this, st, to, k, start, blocking, pass](engine::FlowId, SimTime) {
                      std::int64_t ev = -1;
                      if (tracks_) {
                        ev = tracks_->transfer(static_cast<std::size_t>(st), Track::kPp, "p2p_send", start,
                                               queue_.now(), boundary_bytes_, pass.microbatch, pass.chunk,
                                               pass.backward);
                      }
                      deliver(to, k, ev);
                      if (blocking) {
                        rank(st).waits.pp += seconds_of(queue_.now() - start);
                        advance(st);
                      }
                    });
    return blocking;
  }

  /// The stage (and pass there) that consumes this pass's output.
  std::optional<std::pair<std::int64_t, PipelinePass>> destination(const PipelinePass& p, std::int64_t i) const {
    const std::int64_t pp = s_.parallel.pp;
    const std::int64_t st = ranks_[static_cast<std::size_t>(i)].stage;
    if (!p.backward) {
      if (st < pp - 1) return std::make_pair(st + 1, p);
      if (p.chunk + 1 < vpp_) return std::make_pair(std::int64_t{0}, PipelinePass{p.microbatch, p.chunk + 1, false});
    } else {
      if (st > 0) return std::make_pair(st - 1, p);
      if (p.chunk > 0) return std::make_pair(pp - 1, PipelinePass{p.microbatch, p.chunk - 1, true});
    }
    return std::nullopt;
  }

  void deliver(std::int64_t to, std::size_t k, std::int64_t trace_event) {
    RankState& r = rank(to);
    r.arrival[k] = queue_.now();
    if (r.waiting_for != static_cast<std::int64_t>(k)) return;
    // The wait splits into the transfer (pipeline communication) and waiting for the sender to
    // produce the data at all (the pipeline bubble).
    const SimTime transfer_from = std::max(r.wait_since, r.send_start[k]);
    r.waits.pp += seconds_of(queue_.now() - transfer_from);
    r.waits.bubble += seconds_of(transfer_from - r.wait_since);
    r.waiting_for = -1;
    r.pending_trace_flow = trace_event;
    advance(to);
  }

  const collective::GroupPlacement& group_of(estimate::CommGroup g) const {
    const auto& groups = costs_.groups();
    switch (g) {
      case estimate::CommGroup::kCp: return groups.cp;
      case estimate::CommGroup::kEp: return groups.ep;
      case estimate::CommGroup::kEtp: return groups.etp;
      case estimate::CommGroup::kTp:
      case estimate::CommGroup::kNone: break;
    }
    return groups.tp;
  }

  // ---- the data-parallel stream -------------------------------------------------------------

  double dp_ranks(bool expert) const {
    return static_cast<double>(expert ? s_.parallel.edp(s_.system.gpus) : s_.parallel.dp);
  }

  void flush_buckets(std::int64_t st, bool partial) {
    RankState& r = rank(st);
    const Op op = s_.optimizer.distributed ? Op::kReduceScatter : Op::kAllReduce;
    auto flush = [&](double& bucket, bool expert) {
      const double size = estimate::ddp_bucket_params(dp_ranks(expert));
      while (bucket >= size || (partial && bucket > 0)) {
        const double take = std::min(bucket, size);
        enqueue_dp(st, {op, expert, take, -1});
        bucket -= take;
      }
    };
    flush(r.dense_bucket, false);
    flush(r.expert_bucket, true);
  }

  /// With the distributed optimizer and overlap_param_gather, each chunk's parameters are gathered
  /// bucket by bucket ahead of its first forward (the previous step's optimizer updated the shards).
  void issue_parameter_gathers(std::int64_t st) {
    if (!s_.optimizer.distributed || !s_.optimizer.overlap_param_gather) return;
    RankState& r = rank(st);
    for (std::size_t c = 0; c < r.chunks.size(); ++c) enqueue_gathers(st, static_cast<std::int32_t>(c));
  }

  void enqueue_gathers(std::int64_t st, std::int32_t chunk) {
    RankState& r = rank(st);
    const schedule::RankParams& p = chunk >= 0 ? r.chunks[static_cast<std::size_t>(chunk)].params
                                               : params_[static_cast<std::size_t>(r.stage)];
    for (bool expert : {false, true}) {
      double left = expert ? p.expert : p.dense;
      if (dp_ranks(expert) <= 1) continue;
      const double size = estimate::ddp_bucket_params(dp_ranks(expert));
      while (left > 0) {
        const double take = std::min(left, size);
        if (chunk >= 0) ++r.gathers_pending[static_cast<std::size_t>(chunk)];
        enqueue_dp(st, {Op::kAllGather, expert, take, chunk});
        left -= take;
      }
    }
  }

  void enqueue_dp(std::int64_t st, DpJob job) {
    if (dp_ranks(job.expert) <= 1) return;
    rank(st).dp_queue.push_back(job);
    start_next_dp(st);
  }

  void start_next_dp(std::int64_t st) {
    RankState& r = rank(st);
    if (r.dp_busy || r.dp_queue.empty()) return;
    const DpJob job = r.dp_queue.front();
    r.dp_queue.pop_front();
    r.dp_busy = true;
    const collective::GroupPlacement& g = job.expert ? costs_.groups().edp : costs_.groups().dp;
    const double per_param =
        job.op == Op::kAllGather ? estimate::kParamGatherBytesPerParam : estimate::grad_reduce_bytes_per_param(s_);
    const double bytes = job.params * per_param;
    const double t = collective::collective_time(s_.system, job.op, Bytes(bytes), g).value();
    const double latency = collective::collective_time(s_.system, job.op, Bytes(1), g).value();
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

  static const char* dp_name(const DpJob& job) {
    if (job.op == Op::kAllGather) return job.expert ? "expert_param_all_gather" : "param_all_gather";
    if (job.op == Op::kAllReduce) return job.expert ? "expert_grad_all_reduce" : "grad_all_reduce";
    return job.expert ? "expert_grad_reduce_scatter" : "grad_reduce_scatter";
  }

  void finish_dp(std::int64_t st, const DpJob& job) {
    RankState& r = rank(st);
    r.dp_busy = false;
    if (job.op == Op::kAllGather && job.chunk >= 0) {
      auto& pending = r.gathers_pending[static_cast<std::size_t>(job.chunk)];
      --pending;
      if (pending == 0 && r.waiting_gather == job.chunk) {
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

  // ---- end of the step ----------------------------------------------------------------------

  /// After the last backward: reduce what was not reduced during it, wait for the DP stream, step
  /// the optimizer, and gather parameters now if that is not overlapped with the next forward.
  void begin_drain(std::int64_t st) {
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

  void after_drain(std::int64_t st) {
    RankState& r = rank(st);
    r.draining = false;
    r.waits.dp += seconds_of(queue_.now() - r.wait_since);
    if (r.optimizer_done) {
      finish_rank(st);
      return;
    }
    const double t =
        estimate::optimizer_step_seconds(s_, costs_.kernels(), params_[static_cast<std::size_t>(r.stage)]);
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

  void finish_rank(std::int64_t st) {
    RankState& r = rank(st);
    r.finished = true;
    r.end = queue_.now();
  }

  // ---- result -------------------------------------------------------------------------------

  SimOutput finish();

  const Scenario& s_;
  SimOptions options_;
  estimate::LayerCostModel costs_;
  std::vector<schedule::StageLayers> stages_;
  std::vector<schedule::RankParams> params_;
  moe::ExpertLoadModel loads_;
  PortNetwork ports_;
  engine::EventQueue queue_;
  std::vector<RankState> ranks_;
  std::vector<std::int64_t> global_ranks_;
  std::int64_t m_ = 1, vpp_ = 1;
  std::int64_t ep_sim_ = 1;  ///< EP ranks simulated per stage (1: replicated, ep: distinct under skew)
  /// EP collectives in progress per stage, by sequence number.
  std::vector<std::map<std::int64_t, EpBarrier>> barriers_;
  std::map<std::int64_t, std::vector<double>> load_cache_;
  std::map<std::int32_t, moe::ExpertPlacement> placements_;
  double imbalance_sum_ = 0, imbalance_max_ = 1.0, dropped_ = 0;
  std::int64_t imbalance_draws_ = 0;
  double boundary_bytes_ = 0;
  Timeline timeline_;
  std::unique_ptr<TrackRecorder> tracks_;
};

SimOutput StepSimulation::finish() {
  SimOutput out;
  Result& r = out.result;
  r = estimate::start_result(s_, "simulation");
  // The step ends with the last rank; the breakdown is read on the bottleneck rank, the busiest
  // one (kernels plus blocking communication): its idle time is the bubble the pipeline imposes,
  // whereas the last rank to finish is usually stage 0, idle while it waits for the bottleneck.
  SimTime step_end = 0;
  std::size_t critical = 0;
  auto busy = [](const RankState& rs) { return rs.compute_s + rs.optimizer_s + rs.waits.comm(); };
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    step_end = std::max(step_end, ranks_[i].end);
    if (busy(ranks_[i]) > busy(ranks_[critical]) + 1e-12) critical = i;
  }
  const RankState& c = ranks_[critical];
  r.step_time_s = seconds_of(step_end);
  Breakdown& b = r.breakdown;
  b.compute = c.compute_s;
  b.tp_comm = c.waits.tp;
  b.cp_comm = c.waits.cp;
  b.ep_comm = c.waits.ep;
  b.pp_comm = c.waits.pp;
  b.dp_comm = c.waits.dp;
  b.optimizer = c.optimizer_s;
  b.exposed_comm = c.waits.comm();
  b.bubble = std::max(0.0, r.step_time_s - b.compute - b.exposed_comm - b.optimizer);
  b.critical_stage = c.stage;
  b.moe_imbalance = imbalance_draws_ > 0 ? imbalance_sum_ / static_cast<double>(imbalance_draws_) : 1.0;
  estimate::finish_result(r, stages_, params_);
  if (options_.redundant_experts_per_rank >= 0 && ep_sim_ > 1) {
    r.warnings.push_back(fmt::format(
        "experts re-placed EPLB-style with {} redundant slot(s) per EP rank from each layer's expected loads; "
        "the replicas' weights are not yet counted in memory",
        options_.redundant_experts_per_rank));
  }
  if (s_.model.is_moe() && s_.parallel.ep > 1 && imbalance_draws_ > 0) {
    r.routing.present = true;
    r.routing.draws = imbalance_draws_;
    r.routing.mean_imbalance = b.moe_imbalance;
    r.routing.max_imbalance = imbalance_max_;
    r.routing.drop_rate = dropped_ / static_cast<double>(imbalance_draws_);
  }

  SimulationInfo& si = r.simulation;
  si.present = true;
  si.ranks_total = s_.system.gpus;
  si.ranks_simulated = static_cast<std::int64_t>(ranks_.size());
  const std::int64_t per_stage = s_.system.gpus / s_.parallel.pp;
  if (ep_sim_ == 1) {
    si.replication = fmt::format(
        "one rank per pipeline stage simulated ({} ranks); each stands for the {} ranks of its stage "
        "(TP, CP, DP and EP peers run the same ops at the same times under balanced routing)",
        ranks_.size(), per_stage);
  } else {
    si.replication = fmt::format(
        "every EP rank of one expert-data-parallel replica simulated per stage ({} ranks: pp {} × ep {}); the "
        "other {} expert-DP replicas and their TP peers stand in for them (same ops, loads drawn alike)",
        ranks_.size(), s_.parallel.pp, ep_sim_, per_stage / (ep_sim_ * s_.parallel.etp));
  }
  si.events = static_cast<std::int64_t>(queue_.events_run());
  si.flows = ports_.flows();
  for (const RankState& rs : ranks_) {
    RankActivity a;
    a.rank = rs.global_rank;
    a.stage = rs.stage;
    a.ep_rank = rs.ep_index;
    a.end_s = seconds_of(rs.end);
    a.compute_s = rs.compute_s + rs.optimizer_s;
    a.comm_wait_s = rs.waits.comm();
    a.idle_s = std::max(0.0, r.step_time_s - a.compute_s - a.comm_wait_s);
    si.ranks.push_back(a);
  }
  std::vector<PortStats> ports = ports_.stats();
  std::erase_if(ports, [](const PortStats& p) { return p.bytes <= 0; });
  std::stable_sort(ports.begin(), ports.end(), [](const PortStats& a, const PortStats& b2) { return a.bytes > b2.bytes; });
  constexpr std::size_t kLinksReported = 16;
  for (std::size_t i = 0; i < std::min(ports.size(), kLinksReported); ++i) {
    const PortStats& p = ports[i];
    LinkActivity l;
    l.name = fmt::format("rank {} {}", ranks_[static_cast<std::size_t>(p.rank)].global_rank, p.port);
    l.bytes = p.bytes;
    l.busy_s = p.busy_s;
    l.utilisation = p.bytes / (p.capacity_Bps * r.step_time_s);
    l.peak_utilisation = p.peak_utilisation;
    si.links.push_back(l);
  }
  if (tracks_) {
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
      const RankState& rs = ranks_[i];
      tracks_->name_process(i, rs.global_rank,
                            ep_sim_ == 1 ? fmt::format("rank {} (pp stage {}; stands for its {} stage peers)",
                                                       rs.global_rank, rs.stage, per_stage)
                                         : fmt::format("rank {} (pp stage {}, ep rank {})", rs.global_rank, rs.stage,
                                                       rs.ep_index));
    }
    out.timeline = std::move(timeline_);
  }
  return out;
}

}  // namespace

SimOutput simulate_step(const Scenario& scenario, const SimOptions& options) {
  StepSimulation sim(scenario, options);
  return sim.run();
}

}  // namespace moesim::sim
