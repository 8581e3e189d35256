#include "sim/step_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "moe/expert_loads.hpp"
#include "moe/placement_window.hpp"

namespace moesim::sim::detail {
namespace {
/// The compute stream idle until the host has issued its next op (the trace's compute track).
constexpr LayerOp kWaitForHost{"wait_for_host", OpKind::kHostIdle};
}  // namespace

StepSimulation::StepSimulation(const Scenario& s, const SimOptions& options)
    : s_(s), options_(options), shape_(schedule::step_shape(s)), costs_(s, shape_),
      stages_(schedule::plan_stages(s)), params_(schedule::rank_params(s, stages_)),
      loads_(moe::expert_load_model(s, shape_.groups.ep.per_domain)),
      profile_(moe::placement_profile_model(s, shape_.groups.ep.per_domain)), ports_(queue_, s.system, shape_.simulated_ranks) {
  const auto& p = s.parallel;
  m_ = shape_.microbatches;
  vpp_ = p.vpp;
  // Under balanced routing every rank of a stage runs the same ops at the same times, so one
  // stands for all; under skew the EP ranks of a stage differ and each is simulated.
  ragged_ = s.model.is_moe() && !loads_.balanced();
  ep_sim_ = ragged_ ? p.ep : 1;
  placed_ = s.moe.placement.eplb() && p.ep > 1;
  replica_share_ = program::replica_gradient_share(s);
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
      if (s.moe.a2a_overlap) r.partner = program::combined_partners(order);
      r.chunks = programs;
      r.arrival.assign(static_cast<std::size_t>(2 * vpp_ * m_), engine::kNever);
      r.send_start.assign(r.arrival.size(), engine::kNever);
      r.gathers_pending.assign(static_cast<std::size_t>(vpp_), 0);
      r.gathers_total.assign(static_cast<std::size_t>(vpp_), 0);
    }
  }
  barriers_.resize(static_cast<std::size_t>(p.pp));
  if (options_.record_timeline) tracks_ = std::make_unique<TrackRecorder>(timeline_, ranks_.size());
}

void StepSimulation::poll() const {
  if (options_.stop_requested && options_.stop_requested()) throw StoppedError("stopped while simulating the step");
  if (!options_.progress) return;
  double done = 0, total = 0;
  for (const RankState& r : ranks_) {
    done += static_cast<double>(r.pass);
    total += static_cast<double>(r.order.size());
  }
  options_.progress(done, total);
}

SimOutput StepSimulation::run() {
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(ranks_.size()); ++i) {
    queue_.schedule(0, kComputePriority, [this, i] {
      issue_parameter_gathers(i);
      advance(i);
    });
  }
  if (options_.stop_requested || options_.progress) {
    // 2^16 events take a few milliseconds: a stop is honoured at once and progress stays live.
    queue_.run_polling(1 << 16, [this] { poll(); });
  } else {
    queue_.run();
  }
  for (const RankState& r : ranks_) {
    if (!r.finished) {
      throw InternalError(fmt::format(
          "step simulation stalled: stage {} EP rank {} stopped at pass {} of {} (waiting for slot {}, gather {}, send {}); "
          "the pipeline schedule has a dependency cycle",
          r.stage, r.ep_index, r.pass, r.order.size(), r.waiting_for, r.waiting_gather, r.waiting_send));
    }
  }
  return finish();
}

namespace {

/// Per-slot factors of every EP rank: each local expert's copies relative to `share`, the balanced
/// copies per expert; contiguous experts unless a placement is given.
void fill_expert_factors(const std::vector<double>& experts, const moe::ExpertPlacement* placement, std::int64_t ep,
                         double share, std::vector<double>& factors, std::vector<std::size_t>& offsets) {
  const auto relative = [share](double copies) { return share > 0 ? copies / share : 1.0; };
  offsets.assign(1, 0);
  for (std::int64_t j = 0; j < ep; ++j) {
    if (placement) {
      for (const std::int64_t e : placement->slots[static_cast<std::size_t>(j)]) {
        const auto ue = static_cast<std::size_t>(e);
        factors.push_back(relative(experts[ue] / static_cast<double>(placement->replicas[ue])));
      }
    } else {
      const auto per_rank = experts.size() / static_cast<std::size_t>(ep);
      for (std::size_t e = static_cast<std::size_t>(j) * per_rank; e < static_cast<std::size_t>(j + 1) * per_rank; ++e) {
        factors.push_back(relative(experts[e]));
      }
    }
    offsets.push_back(factors.size());
  }
}

}  // namespace

const StepSimulation::RoutingDraw& StepSimulation::routing_draw(std::int32_t layer, std::int32_t microbatch) {
  const auto key = (static_cast<std::int64_t>(layer) << 32) | static_cast<std::uint32_t>(microbatch);
  auto it = load_cache_.find(key);
  if (it != load_cache_.end()) return it->second;
  const auto& p = s_.parallel;
  const std::int64_t tokens_per_rank = shape_.sp_tokens;
  std::vector<double> experts = loads_.expert_tokens(tokens_per_rank * p.ep, layer, microbatch);
  // The load table records the copies the router kept; padding changes the work, not the routing.
  std::vector<double> routed;
  if (s_.moe.capacity_factor) {
    if (s_.moe.pad_to_capacity) {
      routed = experts;
      moe::apply_capacity(routed, *s_.moe.capacity_factor);
    }
    dropped_ += moe::apply_capacity(experts, *s_.moe.capacity_factor, s_.moe.pad_to_capacity);
  }
  const std::vector<double>& kept = routed.empty() ? experts : routed;
  const moe::ExpertPlacement* placement =
      placed_ ? &placement_of(layer, tokens_per_rank) : nullptr;
  RoutingDraw draw;
  draw.rank_factors = placement ? moe::placed_rank_loads(experts, *placement) : moe::rank_loads(experts, p.ep);
  // Relative to the balanced share the estimate costed (padded to capacity: capacity_factor × it),
  // so dropped copies also shorten the expert work.
  const double mean = static_cast<double>(tokens_per_rank * s_.model.moe_router_topk) * s_.moe.balanced_load_scale();
  for (double& l : draw.rank_factors) l = mean > 0 ? l / mean : 1.0;
  fill_expert_factors(experts, placement, p.ep, mean * static_cast<double>(p.ep) / static_cast<double>(experts.size()),
                      draw.expert_factors, draw.offsets);
  const double worst = moe::imbalance(draw.rank_factors);
  LayerLoadSum& sum = layer_loads_[layer];
  if (sum.tokens.empty()) sum.tokens.assign(experts.size(), 0.0);
  for (std::size_t e = 0; e < kept.size(); ++e) sum.tokens[e] += kept[e];
  ++sum.draws;
  sum.balanced = static_cast<double>(tokens_per_rank * s_.model.moe_router_topk * p.ep) /
                static_cast<double>(experts.size());
  sum.worst = std::max(sum.worst, worst);
  imbalance_sum_ += worst;
  imbalance_max_ = std::max(imbalance_max_, worst);
  ++imbalance_draws_;
  return load_cache_.emplace(key, std::move(draw)).first->second;
}


DispatchMatrixResult StepSimulation::dispatch_matrix_of(std::int32_t layer) {
  const auto& p = s_.parallel;
  const LayerLoadSum& sum = layer_loads_.at(layer);
  const std::int64_t tokens_per_rank = shape_.sp_tokens;
  // Mean copies per expert over the layer's draws, on the ranks that hold them; padded to capacity
  // every expert holds the same.
  std::vector<double> experts = sum.tokens;
  for (double& t : experts) t /= static_cast<double>(std::max<std::int64_t>(sum.draws, 1));
  if (s_.moe.pad_to_capacity) std::fill(experts.begin(), experts.end(), 1.0);
  std::vector<double> loads = placed_ ? moe::placed_rank_loads(experts, placement_of(layer, tokens_per_rank))
                                  : moe::rank_loads(experts, p.ep);
  double total = 0;
  for (const double l : loads) total += l;
  for (double& l : loads) l = total > 0 ? l / total : 1.0 / static_cast<double>(loads.size());
  const moe::DispatchShape shape{s_.model.num_moe_experts, s_.model.moe_router_topk, p.ep,
                                 costs_.groups().ep.per_domain, s_.moe.routing.device_limited_nodes,
                                 s_.moe.dispatcher};
  const moe::DispatchMatrix m = moe::dispatch_matrix(
      shape, static_cast<double>(tokens_per_rank) * s_.moe.balanced_load_scale(), s_.model.hidden_size,
      moe::dispatch_element_bytes(s_.moe.dispatcher, s_.precision, s_.moe.fp8_dispatch), loads);
  return {layer, m.ranks, m.dispatch_bytes, m.combine_bytes};
}

const moe::ExpertPlacement& StepSimulation::placement_of(std::int32_t layer, std::int64_t tokens_per_rank) {
  auto it = placements_.find(layer);
  if (it != placements_.end()) return it->second;
  const std::int64_t routed = tokens_per_rank * s_.parallel.ep;
  if (options_.placement_window_microbatches > 0) {
    // A balancer's window: draws of the interval before (moe/placement_window), never this step's.
    return placements_
        .emplace(layer, moe::eplb_placement(s_, profile_, layer, routed, options_.placement_window_microbatches))
        .first->second;
  }
  std::vector<double> expected = loads_.popularity(layer);
  for (double& x : expected) x *= static_cast<double>(routed * s_.model.moe_router_topk);
  return placements_.emplace(layer, moe::eplb_placement(s_, expected)).first->second;
}

double StepSimulation::load_factor(const RankState& r, const PipelinePass& pass, std::size_t op_index) {
  if (ep_sim_ == 1) return 1.0;
  const ChunkProgram& c = r.chunks[static_cast<std::size_t>(pass.chunk)];
  const std::int32_t layer = (pass.backward ? c.backward_load_layer : c.forward_load_layer)[op_index];
  if (layer < 0) return 1.0;
  return load_factors(layer, pass.microbatch)[static_cast<std::size_t>(r.ep_index)];
}

double StepSimulation::op_seconds(const RankState& r, const PipelinePass& pass, std::size_t op_index) {
  const LayerOp& op = ops_of(r, pass)[op_index];
  // Skewed routing makes every rank's expert loads ragged, EP = 1 included (all experts local, the
  // grouped GEMM still pays for uneven groups).
  if (!ragged_) return op.seconds;
  const ChunkProgram& c = r.chunks[static_cast<std::size_t>(pass.chunk)];
  const std::int32_t layer = (pass.backward ? c.backward_load_layer : c.forward_load_layer)[op_index];
  if (layer < 0) return op.seconds;
  const RoutingDraw& draw = routing_draw(layer, pass.microbatch);
  const auto j = static_cast<std::size_t>(r.ep_index);
  const double rank_factor = draw.rank_factors[j];
  const std::span<const double> slots(draw.expert_factors.data() + draw.offsets[j], draw.offsets[j + 1] - draw.offsets[j]);
  return expert_cost_.seconds(op, slots, rank_factor);
}

void StepSimulation::advance(std::int64_t st) {
  RankState& r = rank(st);
  while (r.pass < r.order.size()) {
    const PipelinePass& pass = r.order[r.pass];
    if (!r.pass_started) {
      if (!ready_to_start(st, pass)) return;
      r.pass_started = true;
    }
    const std::vector<LayerOp>& ops = ops_of(r, pass);
    while (r.op < ops.size() && ops[r.op].seconds <= 0) {
      issue(st, ops[r.op], queue_.now(), pass);  // no GPU time, but the host still issues it
      on_op_done(st, pass, r.op);
      next_op(r, r.op + 1);
    }
    if (r.op < ops.size()) {
      if (gather_blocked(r, pass, r.op, ops.size())) {
        r.waiting_gather = pass.chunk;
        r.wait_since = queue_.now();
        return;
      }
      if (ops[r.op].kind != OpKind::kCompute && !r.op_issued) {
        // A collective (or a measured host wait) starts once the host has issued it.
        r.op_issued = true;
        const SimTime now = queue_.now();
        const SimTime start = issue(st, ops[r.op], now, pass);
        if (start > now) {
          r.host_idle_s += seconds_of(start - now);
          if (tracks_) tracks_->layer_op(static_cast<std::size_t>(st), kWaitForHost, now, start, pass);
          queue_.schedule(start, kComputePriority, [this, st] { advance(st); });
          return;
        }
      }
      if (ops[r.op].kind == OpKind::kCompute) {
        run_kernels(st, pass);
      } else if (ops[r.op].kind == OpKind::kHostIdle || ops[r.op].kind == OpKind::kOffloadComm) {
        // A fixed wait on the compute stream: the host's (measured) or the copy engine's.
        const SimTime start = queue_.now();
        queue_.schedule(start + engine::to_sim_time(Seconds(ops[r.op].seconds)), kComputePriority,
                        [this, st, start] { finish_blocking_op(st, start); });
      } else {
        start_comm(st, pass, ops[r.op]);
      }
      return;
    }
    if (end_pass(st, pass)) return;  // a blocking send holds the rank
  }
  if (!r.drain_started) begin_drain(st);
}

bool StepSimulation::gather_blocked(const RankState& r, const PipelinePass& pass, std::size_t op_index,
                                    std::size_t ops) const {
  if (pass.backward) return false;
  const auto c = static_cast<std::size_t>(pass.chunk);
  const std::int64_t pending = r.gathers_pending[c];
  if (pending == 0) return false;
  const std::int64_t total = r.gathers_total[c];
  const std::int64_t needed =
      ops == 0 ? total : std::max<std::int64_t>(1, (static_cast<std::int64_t>(op_index + 1) * total + static_cast<std::int64_t>(ops) - 1) /
                                                     static_cast<std::int64_t>(ops));
  return total - pending < std::min(needed, total);
}

bool StepSimulation::ready_to_start(std::int64_t st, const PipelinePass& pass) {
  RankState& r = rank(st);
  if (gather_blocked(r, pass, 0, ops_of(r, pass).size())) {
    r.waiting_gather = pass.chunk;
    r.wait_since = queue_.now();
    return false;
  }
  const int direction = pass.backward ? 1 : 0;
  if (r.send_in_flight[direction]) {
    r.waiting_send = direction;
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

void StepSimulation::run_kernels(std::int64_t st, const PipelinePass& pass) {
  RankState& r = rank(st);
  const std::vector<LayerOp>& ops = ops_of(r, pass);
  const ChunkProgram& chunk = r.chunks[static_cast<std::size_t>(pass.chunk)];
  const std::size_t first = r.op;
  std::size_t end = first;
  SimTime t = queue_.now();
  SimTime waited = 0;  // the stream waiting for the host between these kernels
  while (end < ops.size() && ops[end].kind == OpKind::kCompute) {
    const LayerOp& op = ops[end];
    const SimTime begin = issue(st, op, t, pass);
    if (begin > t) {
      if (tracks_) tracks_->layer_op(static_cast<std::size_t>(st), kWaitForHost, t, begin, pass);
      waited += begin - t;
      t = begin;
    }
    const SimTime d = op.seconds > 0 ? engine::to_sim_time(Seconds(op_seconds(r, pass, end))) : 0;
    if (tracks_ && d > 0) record_trace(st, op, t, t + d, pass);
    t += d;
    const bool mark = pass.backward && chunk.backward_marks[end];
    ++end;
    if (mark) break;
  }
  const SimTime start = queue_.now();
  queue_.schedule(t, kComputePriority, [this, st, first, end, start, waited] {
    RankState& rr = rank(st);
    rr.compute_s += seconds_of(queue_.now() - start - waited);
    rr.host_idle_s += seconds_of(waited);
    const PipelinePass& p = rr.order[rr.pass];
    for (std::size_t i = first; i < end; ++i) on_op_done(st, p, i);
    next_op(rr, end);
    advance(st);
  });
}

void StepSimulation::record_trace(std::int64_t st, const LayerOp& op, SimTime start, SimTime end, const PipelinePass& pass) {
  RankState& r = rank(st);
  const std::int64_t ev = tracks_->layer_op(static_cast<std::size_t>(st), op, start, end, pass);
  if (r.pending_trace_flow >= 0) {
    tracks_->arrow(r.pending_trace_flow, ev);
    r.pending_trace_flow = -1;
  }
}

void StepSimulation::start_comm(std::int64_t st, const PipelinePass& pass, const LayerOp& op) {
  RankState& r = rank(st);
  const SimTime now = queue_.now();
  if (op.group == program::CommGroup::kEp && ep_sim_ > 1) {
    EpBarrier& b = barriers_[static_cast<std::size_t>(r.stage)][r.ep_collectives++];
    b.members.push_back({st, now});
    if (static_cast<std::int64_t>(b.members.size()) < ep_sim_) return;
    const std::int64_t seq = r.ep_collectives - 1;
    for (const auto& [member, arrived] : b.members) {
      RankState& m = rank(member);
      const PipelinePass& mp = m.order[m.pass];
      const double scale = load_factor(m, mp, m.op);
      const double took = op.latency_s + (op.seconds - op.latency_s) * scale;
      ports_.transfer(member, PortNetwork::tier_of(group_of(op.group)), Direction::kBoth,
                      std::max(op.latency_s, took - ep_hidden_now(m)), op.latency_s, now,
                      [this, stage = r.stage, seq](engine::FlowId, SimTime) { barrier_flow_done(stage, seq); });
    }
    return;
  }
  const collective::GroupPlacement& g = group_of(op.group);
  const double hidden = op.group == program::CommGroup::kEp ? ep_hidden_now(r) : 0.0;
  ports_.transfer(st, PortNetwork::tier_of(g), Direction::kBoth, std::max(op.latency_s, op.seconds - hidden), op.latency_s, now,
                  [this, st, now](engine::FlowId, SimTime) { finish_blocking_op(st, now); });
  (void)pass;
}

void StepSimulation::barrier_flow_done(std::int64_t stage, std::int64_t seq) {
  auto& stage_barriers = barriers_[static_cast<std::size_t>(stage)];
  auto it = stage_barriers.find(seq);
  EpBarrier& b = it->second;
  if (++b.done < ep_sim_) return;
  const auto members = std::move(b.members);
  stage_barriers.erase(it);
  for (const auto& [member, arrived] : members) finish_blocking_op(member, arrived);
}

void StepSimulation::finish_blocking_op(std::int64_t st, SimTime start) {
  RankState& r = rank(st);
  const PipelinePass& pass = r.order[r.pass];
  const LayerOp& op = ops_of(r, pass)[r.op];
  const double took = seconds_of(queue_.now() - start);
  switch (op.kind) {
    case OpKind::kCompute: r.compute_s += took; break;
    case OpKind::kTpComm: r.waits.tp += took; break;
    case OpKind::kCpComm: r.waits.cp += took; break;
    case OpKind::kEpComm: r.waits.ep += took; break;
    case OpKind::kOffloadComm: r.waits.offload += took; break;
    case OpKind::kHostIdle: r.host_idle_s += took; break;
  }
  if (tracks_) record_trace(st, op, start, queue_.now(), pass);
  on_op_done(st, pass, r.op);
  next_op(r, r.op + 1);
  advance(st);
}

SimTime StepSimulation::issue(std::int64_t st, const LayerOp& op, SimTime gpu_ready, const PipelinePass& pass) {
  RankState& r = rank(st);
  const SimTime from = op.host_sync ? std::max(r.host_at, gpu_ready) : r.host_at;
  r.host_at = from + (op.host_s > 0 ? engine::to_sim_time(Seconds(op.host_s)) : 0);
  if (tracks_ && r.host_at > from) tracks_->host_op(static_cast<std::size_t>(st), op, from, r.host_at, pass);
  return std::max(gpu_ready, r.host_at);
}

void StepSimulation::on_op_done(std::int64_t st, const PipelinePass& pass, std::size_t op_index) {
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

}  // namespace moesim::sim::detail
