#include "sim/step_simulation.hpp"

#include <algorithm>

namespace moesim::sim::detail {

bool StepSimulation::end_pass(std::int64_t st, const PipelinePass& pass) {
  RankState& r = rank(st);
  const auto dest = destination(pass, st);
  r.pass_started = false;
  next_op(r, 0);
  ++r.pass;
  if (!dest) return false;
  const auto [to_stage, to_pass] = *dest;
  const std::int64_t to = index_of(to_stage, r.ep_index);
  RankState& receiver = rank(to);
  const std::size_t k = slot(to_pass);
  const SimTime start = queue_.now();
  receiver.send_start[k] = start;
  const double t = costs_.collectives().time(Op::kSendRecv, Bytes(shape_.boundary_bytes), costs_.groups().pp).value();
  const double latency = costs_.collectives().latency(Op::kSendRecv, costs_.groups().pp).value();
  // 1F1B exchanges activations with blocking batched send/recv; the interleaved schedule overlaps
  // them with compute (overlap_p2p_comm, as Megatron's recipes run it) until the next pass of the
  // same direction, which waits on the handle.
  const bool blocking = vpp_ == 1;
  const int direction = pass.backward ? 1 : 0;
  if (!blocking) r.send_in_flight[direction] = true;
  ports_.transfer(st, PortNetwork::tier_of(costs_.groups().pp), Direction::kOut, t, latency, start,
                  [this, st, to, k, start, blocking, direction, pass](engine::FlowId, SimTime) {
                    std::int64_t ev = -1;
                    if (tracks_) {
                      ev = tracks_->transfer(static_cast<std::size_t>(st), Track::kPp, "p2p_send", start,
                                             queue_.now(), shape_.boundary_bytes, pass.microbatch, pass.chunk,
                                             pass.backward);
                    }
                    deliver(to, k, ev);
                    RankState& sender = rank(st);
                    if (blocking) {
                      sender.waits.pp += seconds_of(queue_.now() - start);
                      advance(st);
                      return;
                    }
                    sender.send_in_flight[direction] = false;
                    if (sender.waiting_send == direction) {
                      sender.waits.pp += seconds_of(queue_.now() - sender.wait_since);
                      sender.waiting_send = -1;
                      advance(st);
                    }
                  });
  return blocking;
}

std::optional<std::pair<std::int64_t, PipelinePass>> StepSimulation::destination(const PipelinePass& p,
                                                                                 std::int64_t i) const {
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

void StepSimulation::deliver(std::int64_t to, std::size_t k, std::int64_t trace_event) {
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

}  // namespace moesim::sim::detail
