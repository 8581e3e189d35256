#include "estimate/step_estimator.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "moe/expected_skew.hpp"
#include "moe/placement_window.hpp"
#include "program/data_parallel.hpp"
#include "program/ep_overlap.hpp"
#include "program/host_gate.hpp"
#include "program/layer_cost.hpp"
#include "program/ragged_expert_cost.hpp"
#include "program/result_common.hpp"
#include "schedule/stage_params.hpp"
#include "schedule/stage_plan.hpp"
#include "schedule/step_shape.hpp"

namespace moesim::estimate {
namespace {

using schedule::plan_stages;
using schedule::rank_params;
using schedule::RankParams;
using schedule::StageLayers;

using collective::Op;
// The op program (program/) is what this evaluator composes over the pipeline formula.
using program::combined_pairs;
using program::ddp_bucket_params;
using program::dispatcher_sm_share;
using program::ep_pair_saving;
using program::EpPairSaving;
using program::exposed_grad_reduction;
using program::exposed_param_gather;
using program::finish_result;
using program::grad_reduce_bytes_per_param;
using program::LayerCostModel;
using program::MemoryInputs;
using program::OpProgram;
using program::optimizer_step_seconds;
using program::param_gather_bytes_per_param;
using program::start_result;
using program::UnitCost;


struct StageCost {
  UnitCost unit;  ///< one micro-batch through every chunk of the stage
  double forward = 0, backward = 0;
};

/// The host gates of one micro-batch through a stage: its units' forwards in order, then their
/// backwards in reverse order (program/host_gate.hpp).
struct StageHost {
  program::HostGate forward, backward;
  bool priced = false;  ///< some op costs the host time or synchronises it
  void add(const LayerCostModel::LayerKind& layer) { add(layer.forward_gate, layer.backward_gate); }
  void add(const OpProgram& ops) { add(program::host_gate(ops.forward), program::host_gate(ops.backward)); }
  void add(const program::HostGate& f, const program::HostGate& b) {
    forward = forward.then(f);
    backward = b.then(backward);
    // A gate without host time keeps the host clock where it was (hh = 0) and apart from the GPU's.
    for (const program::HostGate* g : {&f, &b}) priced = priced || g->hh > 0 || g->hg > program::HostGate::kNone;
  }
  [[nodiscard]] program::HostGate per_microbatch() const { return forward.then(backward); }
};

struct DpCost {
  double exposed = 0;
  double optimizer = 0;
};

DpCost dp_and_optimizer(const Scenario& s, const schedule::GroupLayout& g, const compute::KernelCostModel& kernels,
                        const collective::CollectiveCostModel& comms, const RankParams& rp, const StageCost& sc) {
  const auto& p = s.parallel;
  const auto& o = s.optimizer;
  const double dp = static_cast<double>(p.dp);
  const double edp = static_cast<double>(p.edp(s.system.gpus));
  const double grad_bytes = grad_reduce_bytes_per_param(s);
  const double param_bytes = param_gather_bytes_per_param(s);
  double grad_sync = 0, param_gather = 0, buckets = 1;
  auto add = [&](double params, const collective::GroupPlacement& group, double ranks) {
    if (ranks <= 1 || params <= 0) return;
    if (o.distributed) {
      grad_sync += comms.time(Op::kReduceScatter, Bytes(params * grad_bytes), group).value();
      param_gather += comms.time(Op::kAllGather, Bytes(params * param_bytes), group).value();
    } else {
      grad_sync += comms.time(Op::kAllReduce, Bytes(params * grad_bytes), group).value();
    }
    buckets = std::max(buckets, std::ceil(params / ddp_bucket_params(ranks)));
  };
  add(rp.dense, g.dp, dp);
  add(rp.expert, g.edp, edp);
  if (const double share = program::replica_gradient_share(s); share > 0) {
    grad_sync += comms.time(Op::kAllReduce, Bytes(rp.expert * share * grad_bytes), program::replica_group(g)).value();
  }
  DpCost out;
  // Gradients are reduced bucket by bucket as each model chunk's last backward fills them; the last
  // bucket (and whatever the backward cannot cover) stays exposed. Parameters are gathered bucket by
  // bucket ahead of each chunk's first forward (data_parallel.hpp).
  const double grad_exposed =
      o.overlap_grad_reduce ? exposed_grad_reduction({grad_sync, buckets, p.vpp, p.pp, sc.backward}) : grad_sync;
  const double gather_exposed = (o.distributed && o.overlap_param_gather)
                                    ? exposed_param_gather({param_gather, buckets, p.vpp, p.pp, sc.forward})
                                    : param_gather;
  out.exposed = grad_exposed + gather_exposed;
  out.optimizer = optimizer_step_seconds(s, kernels, rp);
  return out;
}

/// Combined 1F1B (program/ep_overlap.hpp): the all-to-all a paired pass hides, spread over the
/// stage's micro-batches in the share of its passes that run paired.
void hide_combined_all_to_alls(const Scenario& s, const LayerCostModel& lc, const StageLayers& stage, std::int64_t rank,
                               StageCost& sc) {
  EpPairSaving per_microbatch;
  const double sm_share = dispatcher_sm_share(s);
  auto add = [&](std::int64_t layer) {
    const EpPairSaving one = ep_pair_saving(lc.layer(layer).ops, sm_share);
    per_microbatch.dispatch_forward += one.dispatch_forward;
    per_microbatch.combine_forward += one.combine_forward;
    per_microbatch.dispatch_backward += one.dispatch_backward;
    per_microbatch.combine_backward += one.combine_backward;
  };
  for (std::int64_t layer : stage.layers) add(layer);
  if (stage.has_output_head) {
    for (std::int64_t k = 0; k < s.model.mtp_num_layers; ++k) add(s.model.num_layers - 1);
  }
  const std::int64_t m = s.num_microbatches();
  const std::int64_t vpp = s.parallel.vpp;
  const double pairs = static_cast<double>(combined_pairs(schedule::pipeline_order(rank, s.parallel.pp, vpp, m)));
  // Each pair joins one chunk-pass of each direction: pairs / (m·vpp) of the passes run paired.
  const double paired_share = pairs / static_cast<double>(m * vpp);
  sc.unit.forward.ep_comm = std::max(0.0, sc.unit.forward.ep_comm - paired_share * per_microbatch.forward());
  sc.unit.backward.ep_comm = std::max(0.0, sc.unit.backward.ep_comm - paired_share * per_microbatch.backward());
}

/// Under skewed routing every EP rank of a stage waits at each MoE layer's all-to-all for the most
/// loaded one, as the simulation runs it: each layer is priced on its expected most loaded EP rank
/// (moe/expected_skew.hpp), with the simulation's own rules for which ops follow the load and how a
/// grouped expert GEMM runs over ragged rows (program/ragged_expert_cost.hpp). Padding to capacity
/// gives every expert the same rows, so it removes the skew.
class SkewedLayers {
 public:
  SkewedLayers(const Scenario& s, const schedule::StepShape& shape, const LayerCostModel& lc)
      : s_(s), lc_(lc), cost_(lc.kernels()) {
    active_ = shape.routing_skewed && !s.moe.pads_to_capacity();
    if (!active_) return;
    loads_.emplace(moe::expert_load_model(s, shape.groups.ep.per_domain));
    query_ = {shape.sp_tokens * s.parallel.ep, s.parallel.ep, s.moe.capacity_factor};
    // One popularity serves every layer unless it varies per layer (or is measured per layer).
    const auto varies = [](const RoutingSpec& r) {
      return r.per_layer_variation || r.distribution == RoutingDistribution::kHistogram;
    };
    per_layer_ = varies(s.moe.routing);
    if (s.moe.placement.eplb() && s.parallel.ep > 1) {
      profile_.emplace(moe::placement_profile_model(s, shape.groups.ep.per_domain));
      per_layer_ = per_layer_ || (s.moe.placement.profile && varies(*s.moe.placement.profile));
    }
  }
  [[nodiscard]] bool active() const { return active_; }

  /// The unit at model layer `cost_layer` routed as layer `load_layer` (MTP layers run the last
  /// layer's program with loads of their own, numbered after the model's layers): its ops, cost and
  /// host gates on the layer's expected most loaded EP rank.
  const LayerCostModel::LayerKind& layer(std::int64_t cost_layer, std::int64_t load_layer) {
    const LayerCostModel::LayerKind& base = lc_.layer(cost_layer);
    if (!s_.model.layer_is_moe(cost_layer)) return base;  // a dense layer: no routing
    ++priced_[load_layer];
    const std::int64_t key = per_layer_ ? load_layer : 0;
    auto it = kinds_.find({&base, key});
    if (it != kinds_.end()) return it->second;
    auto load = loads_by_key_.find(key);
    if (load == loads_by_key_.end()) {
      // EPLB places from the window's expected loads (a long window's counts) and is judged here.
      moe::SkewQuery q = query_;
      std::optional<moe::ExpertPlacement> placed;
      if (profile_) placed.emplace(moe::eplb_placement(s_, *profile_, load_layer, q.routed_tokens, 0));
      q.placement = placed ? &*placed : nullptr;
      load = loads_by_key_.emplace(key, moe::expected_max_rank_load(*loads_, load_layer, q)).first;
    }
    LayerCostModel::LayerKind skewed;
    skewed.ops = program::on_expected_rank(base.ops, load->second, s_.moe.dispatcher, cost_);
    skewed.cost = skewed.ops.cost();
    skewed.forward_gate = program::host_gate(skewed.ops.forward);
    skewed.backward_gate = program::host_gate(skewed.ops.backward);
    return kinds_.emplace(std::make_pair(&base, key), std::move(skewed)).first->second;
  }

  /// E[max/mean copies per EP rank], averaged over the MoE layers priced (1 without skew).
  [[nodiscard]] double mean_imbalance() const {
    if (loads_by_key_.empty()) return 1.0;
    double sum = 0;
    std::int64_t n = 0;
    for (const auto& [layer, moe_layers] : priced_) {
      sum += loads_by_key_.at(per_layer_ ? layer : 0).max_rank_factor * static_cast<double>(moe_layers);
      n += moe_layers;
    }
    return n > 0 ? sum / static_cast<double>(n) : 1.0;
  }

 private:
  const Scenario& s_;
  const LayerCostModel& lc_;
  program::RaggedExpertCost cost_;
  bool active_ = false, per_layer_ = false;
  std::optional<moe::ExpertLoadModel> loads_;
  std::optional<moe::ExpertLoadModel> profile_;  ///< the EPLB window's routing (moe.placement), if placed
  moe::SkewQuery query_;
  std::map<std::int64_t, moe::ExpectedRankLoad> loads_by_key_;
  /// Each layer kind on the expected hottest rank of each popularity (one unless it varies per layer).
  std::map<std::pair<const LayerCostModel::LayerKind*, std::int64_t>, LayerCostModel::LayerKind> kinds_;
  std::map<std::int64_t, std::int64_t> priced_;
};

}  // namespace

Result estimate_step(const Scenario& s, const EstimateOptions& options) {
  Result r = start_result(s, Fidelity::kEstimate);

  const auto& p = s.parallel;
  const schedule::StepShape shape = schedule::step_shape(s);
  const LayerCostModel lc(s, shape);
  const std::vector<StageLayers> stages = plan_stages(s);
  const std::vector<RankParams> params = rank_params(s, stages);

  SkewedLayers skewed(s, shape, lc);
  // A unit's cost and host gates: as costed, or on its expected most loaded EP rank under skew.
  auto add_layer = [&](StageCost& sc, StageHost& host, std::int64_t cost_layer, std::int64_t load_layer) {
    const LayerCostModel::LayerKind& kind =
        skewed.active() ? skewed.layer(cost_layer, load_layer) : lc.layer(cost_layer);
    sc.unit += kind.cost;
    host.add(kind);
  };

  const OpProgram embedding = lc.embedding_ops(), head = lc.output_head_ops(), mtp = lc.mtp_projection_ops();
  const UnitCost embedding_cost = embedding.cost(), head_cost = head.cost(), mtp_cost = mtp.cost();
  const double microbatches = static_cast<double>(s.num_microbatches());
  std::vector<StageCost> stage_costs(stages.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    StageCost& sc = stage_costs[i];
    StageHost host;
    if (stages[i].has_embedding) {
      sc.unit += embedding_cost;
      host.add(embedding);
    }
    for (std::int64_t layer : stages[i].layers) add_layer(sc, host, layer, layer);
    if (stages[i].has_output_head) {
      for (std::int64_t k = 0; k < s.model.mtp_num_layers; ++k) {
        sc.unit += mtp_cost;
        host.add(mtp);
        add_layer(sc, host, s.model.num_layers - 1, s.model.num_layers + k);
      }
      sc.unit += head_cost.scaled(static_cast<double>(1 + s.model.mtp_num_layers));
      for (std::int64_t k = 0; k <= s.model.mtp_num_layers; ++k) host.add(head);
    }
    // The GPU waiting for the host: the stage's micro-batches back to back through the host gate,
    // less their GPU time, per micro-batch.
    if (host.priced) {
      const double gpu = sc.unit.forward.total() + sc.unit.backward.total();
      const double gated = host.per_microbatch().repeated(s.num_microbatches()).gpu_end();
      sc.unit.forward.host_idle += std::max(0.0, gated / microbatches - gpu);
    }
    if (s.moe.a2a_overlap) hide_combined_all_to_alls(s, lc, stages[i], static_cast<std::int64_t>(i), sc);
    sc.forward = sc.unit.forward.total();
    sc.backward = sc.unit.backward.total();
  }

  // Pipeline schedule (1F1B, or interleaved with vpp chunks): the slowest stage runs all m
  // micro-batches back to back; the fill and drain through the other stages cost 1/vpp of theirs.
  const double m = static_cast<double>(s.num_microbatches());
  const double vpp = static_cast<double>(p.vpp);
  std::size_t slowest = 0;
  double sum_x = 0;
  for (std::size_t i = 0; i < stage_costs.size(); ++i) {
    const double x = stage_costs[i].forward + stage_costs[i].backward;
    sum_x += x;
    if (x > stage_costs[slowest].forward + stage_costs[slowest].backward) slowest = i;
  }
  const double x_max = stage_costs[slowest].forward + stage_costs[slowest].backward;
  double pp_comm = 0;
  if (p.pp > 1) {
    const double t_p2p =
        lc.collectives().time(Op::kSendRecv, Bytes(shape.boundary_bytes), lc.groups().pp).value();
    // 1F1B blocks on each activation / gradient exchange; the interleaved schedule overlaps them in
    // steady state and only the fill and drain wait.
    pp_comm = p.vpp > 1 ? 2.0 * static_cast<double>(p.pp - 1) * t_p2p
                        : 2.0 * (m + static_cast<double>(p.pp - 1)) * t_p2p;
  }
  const double pipeline = m * x_max + (sum_x - x_max) / vpp + pp_comm;

  // Each stage finishes its last backward earlier than stage 0 by the drain behind it; then it
  // reduces gradients and steps the optimizer. The step ends when the last stage is done.
  double best_end = -1;
  std::size_t critical = 0;
  std::vector<DpCost> dp_costs;
  double offset = 0;
  for (std::size_t i = 0; i < stage_costs.size(); ++i) {
    dp_costs.push_back(dp_and_optimizer(s, lc.groups(), lc.kernels(), lc.collectives(), params[i], stage_costs[i]));
    const double end = pipeline - offset + dp_costs.back().exposed + dp_costs.back().optimizer;
    if (end > best_end + 1e-15) {
      best_end = end;
      critical = i;
    }
    offset += stage_costs[i].backward / vpp;
  }
  r.step_time_s = best_end;
  // The breakdown is read on the bottleneck stage: the one whose micro-batches set the pace of the
  // pipeline. Its idle time (fill, drain, waiting for slower neighbours' gradients) is the bubble.
  (void)critical;
  critical = slowest;

  const StageCost& cs = stage_costs[critical];
  Breakdown& b = r.breakdown;
  b.compute = m * (cs.unit.forward.compute + cs.unit.backward.compute);
  b.tp_comm = m * (cs.unit.forward.tp_comm + cs.unit.backward.tp_comm);
  b.cp_comm = m * (cs.unit.forward.cp_comm + cs.unit.backward.cp_comm);
  b.ep_comm = m * (cs.unit.forward.ep_comm + cs.unit.backward.ep_comm);
  b.offload_comm = m * (cs.unit.forward.offload_comm + cs.unit.backward.offload_comm);
  b.pp_comm = pp_comm;
  b.dp_comm = dp_costs[critical].exposed;
  b.optimizer = dp_costs[critical].optimizer;
  b.host_idle = m * (cs.unit.forward.host_idle + cs.unit.backward.host_idle);
  b.critical_stage = static_cast<std::int64_t>(critical);
  b.exposed_comm = b.tp_comm + b.cp_comm + b.ep_comm + b.pp_comm + b.dp_comm + b.offload_comm;
  b.bubble = std::max(0.0, r.step_time_s - b.compute - b.exposed_comm - b.optimizer - b.host_idle);
  b.moe_imbalance = skewed.mean_imbalance();

  MemoryInputs memory;
  memory.compute = options.memory;
  finish_result(r, stages, memory, &lc);
  return r;
}

}  // namespace moesim::estimate
