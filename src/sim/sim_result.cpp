#include "sim/step_simulation.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace moesim::sim::detail {

SimOutput StepSimulation::finish() {
  SimOutput out;
  Result& r = out.result;
  r = program::start_result(s_, Fidelity::kSimulation);
  // The step ends with the last rank; the breakdown is read on the bottleneck rank, the busiest
  // one (kernels plus blocking communication): its idle time is the bubble the pipeline imposes,
  // whereas the last rank to finish is usually stage 0, idle while it waits for the bottleneck.
  SimTime step_end = 0;
  std::size_t critical = 0;
  auto busy = [](const RankState& rs) { return rs.compute_s + rs.optimizer_s + rs.waits.comm() + rs.host_idle_s; };
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
  b.offload_comm = c.waits.offload;
  b.pp_comm = c.waits.pp;
  b.dp_comm = c.waits.dp;
  b.optimizer = c.optimizer_s;
  b.host_idle = c.host_idle_s;
  b.exposed_comm = c.waits.comm();
  b.bubble = std::max(0.0, r.step_time_s - b.compute - b.exposed_comm - b.optimizer - b.host_idle);
  b.critical_stage = c.stage;
  b.moe_imbalance = imbalance_draws_ > 0 ? imbalance_sum_ / static_cast<double>(imbalance_draws_) : 1.0;
  // The most loaded EP rank's routed copies set its activations (balanced: 1).
  program::MemoryInputs memory;
  memory.expert_load_factor = ep_sim_ > 1 ? imbalance_max_ : 1.0;
  program::finish_result(r, stages_, memory, &costs_);
  if (placed_ && ep_sim_ > 1) {
    r.warnings.push_back(
        options_.placement_window_microbatches > 0
            ? fmt::format("EPLB window: {} micro-batches drawn over the interval before, summed",
                          options_.placement_window_microbatches)
            : std::string("EPLB placed from the exact popularity this step is drawn around (an oracle, for "
                          "comparison: no balancer has it)"));
  }
  if (s_.model.is_moe() && imbalance_draws_ > 0) {
    r.routing.present = true;
    r.routing.draws = imbalance_draws_;
    r.routing.mean_imbalance = b.moe_imbalance;
    r.routing.max_imbalance = imbalance_max_;
    r.routing.drop_rate = dropped_ / static_cast<double>(imbalance_draws_);
    for (const auto& [layer, sum] : layer_loads_) {
      LayerExpertLoad l;
      l.layer = layer;
      l.max_rank_imbalance = sum.worst;
      l.expert_load.reserve(sum.tokens.size());
      const double denom = sum.balanced * static_cast<double>(sum.draws);
      for (double t : sum.tokens) l.expert_load.push_back(denom > 0 ? t / denom : 1.0);
      r.routing.layers.push_back(std::move(l));
    }
    if (!layer_loads_.empty() && s_.parallel.ep > 1) {
      r.routing.dispatch_matrix = dispatch_matrix_of(layer_loads_.begin()->first);
    }
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

}  // namespace moesim::sim::detail
