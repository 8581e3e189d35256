#pragma once
// Internals of the step simulation (sim/step_simulator.hpp is the interface): the state of each
// simulated rank and the interpreter that runs it on the event queue. Its methods live in
// step_simulation.cpp (compute stream, layer collectives, expert loads), pipeline_transfers.cpp
// (sends between stages), data_parallel_stream.cpp (gradient buckets, parameter gathers, optimizer)
// and sim_result.cpp (the Result).
#include "sim/step_simulator.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "core/error.hpp"
#include "engine/event_queue.hpp"
#include "engine/flow_network.hpp"
#include "program/data_parallel.hpp"
#include "program/ep_overlap.hpp"
#include "program/layer_cost.hpp"
#include "program/ragged_expert_cost.hpp"
#include "program/result_common.hpp"
#include "moe/dispatch_matrix.hpp"
#include "moe/expert_loads.hpp"
#include "moe/placement.hpp"
#include "schedule/pipeline_schedule.hpp"
#include "schedule/step_shape.hpp"
#include "sim/chunk_program.hpp"
#include "sim/port_network.hpp"
#include "sim/sim_tracks.hpp"

namespace moesim::sim::detail {

using collective::Op;
using engine::SimTime;
using program::LayerOp;
using program::OpKind;
using schedule::PipelinePass;

// Compute events run before flow completions at the same instant, so a rank that finishes a
// kernel and a transfer at once sees both.
constexpr int kComputePriority = 1;

inline double seconds_of(SimTime t) { return engine::to_seconds(t).value(); }

/// A data-parallel collective of one gradient or parameter bucket.
struct DpJob {
  Op op = Op::kReduceScatter;
  bool expert = false;
  double params = 0;
  std::int32_t chunk = -1;  ///< parameter all-gathers: the chunk whose forward waits for it
  bool replicas = false;    ///< the EPLB copies' gradient sum (program::replica_gradient_share)
};

/// Blocked-time accounting of one rank, by category (seconds).
struct Waits {
  double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0, offload = 0, bubble = 0;
  [[nodiscard]] double comm() const { return tp + cp + ep + pp + dp + offload; }
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
  /// moe.a2a_overlap: per pass of `order`, the pass it runs combined with or -1 (program/ep_overlap).
  std::vector<std::int32_t> partner;
  std::vector<ChunkProgram> chunks;
  std::size_t pass = 0;     ///< index into order
  std::size_t op = 0;       ///< next op of the current pass
  /// The host clock: when it has issued every op up to the current one (program/host_ops). It runs
  /// ahead of the GPU, except that a host_sync op makes it wait for the GPU.
  SimTime host_at = 0;
  bool op_issued = false;  ///< the host has issued the current (blocking) op
  bool pass_started = false;
  bool finished = false;
  // Pipeline receives: arrival time per (direction, chunk, micro-batch), kNever until it lands.
  std::vector<SimTime> arrival, send_start;
  std::int64_t waiting_for = -1;  ///< arrival slot this rank is blocked on, -1 if none
  /// Interleaved schedule: a send of the last forward [0] / backward [1] output still in flight.
  /// Megatron waits on the batched send/recv handle of the previous pass of the same direction
  /// before the next one, so a send overlaps the passes of the other direction only.
  bool send_in_flight[2] = {false, false};
  std::int32_t waiting_send = -1;  ///< direction whose send this rank is blocked on, -1 if none
  SimTime wait_since = 0;
  // Data parallelism: a FIFO of bucket collectives on the DP stream.
  std::deque<DpJob> dp_queue;
  bool dp_busy = false;
  double dense_bucket = 0, expert_bucket = 0;
  std::vector<std::int32_t> gathers_pending;  ///< parameter all-gathers outstanding per chunk
  std::vector<std::int32_t> gathers_total;    ///< parameter all-gathers issued per chunk this step
  std::int32_t waiting_gather = -1;           ///< chunk whose all-gather this rank is blocked on
  bool drain_started = false;
  bool draining = false;                      ///< after the last pass: waiting for the DP stream to empty
  bool optimizer_done = false;
  // Accounting.
  double compute_s = 0, optimizer_s = 0;
  double host_idle_s = 0;  ///< the compute stream waiting for the host (its issue, or kHostIdle ops)
  Waits waits;
  SimTime end = 0;
  std::int64_t pending_trace_flow = -1;  ///< send event whose arrow ends at this rank's next event
};

class StepSimulation {
 public:
  StepSimulation(const Scenario& s, const SimOptions& options);

  SimOutput run();

 private:
  /// Between batches of events: a requested stop (StoppedError) and the progress callback.
  void poll() const;
  std::int64_t index_of(std::int64_t stage, std::int64_t ep_index) const { return stage * ep_sim_ + ep_index; }
  RankState& rank(std::int64_t i) { return ranks_[static_cast<std::size_t>(i)]; }

  /// One (routing layer, micro-batch) draw as the simulated EP ranks of a stage see it.
  struct RoutingDraw {
    std::vector<double> rank_factors;  ///< tokens routed to each EP rank relative to the mean
    /// Copies each local expert slot of a rank receives relative to the balanced share per expert (a
    /// replicated expert's tokens split evenly over its replicas): rank j's slots are
    /// expert_factors[offsets[j] .. offsets[j + 1]).
    std::vector<double> expert_factors;
    std::vector<std::size_t> offsets;
  };
  const RoutingDraw& routing_draw(std::int32_t layer, std::int32_t microbatch);

  /// Tokens routed to each EP rank of a stage relative to the mean, for (routing layer, micro-batch).
  const std::vector<double>& load_factors(std::int32_t layer, std::int32_t microbatch) {
    return routing_draw(layer, microbatch).rank_factors;
  }

  /// EPLB re-places a layer's experts from the loads it expects (its popularity), not from one
  /// micro-batch's draw, as the balancer works from accumulated statistics.
  const moe::ExpertPlacement& placement_of(std::int32_t layer, std::int64_t tokens_per_rank);

  /// The factor by which an op's cost follows this rank's expert load (chunk_program.hpp says which
  /// ops do): the tokens the rank receives relative to the balanced share.
  double load_factor(const RankState& r, const PipelinePass& pass, std::size_t op_index);

  /// Time of a compute op on this rank: its estimated time, except that under skew the expert kernels
  /// follow the rank's load — the grouped expert GEMMs (ops with local_experts > 0) re-costed over the
  /// rank's per-expert token counts (compute/grouped_gemm), the other expert_* kernels linearly.
  double op_seconds(const RankState& r, const PipelinePass& pass, std::size_t op_index);

  std::size_t slot(const PipelinePass& p) const {
    return static_cast<std::size_t>(((p.backward ? 1 : 0) * vpp_ + p.chunk) * m_ + p.microbatch);
  }

  const std::vector<LayerOp>& ops_of(const RankState& r, const PipelinePass& p) const {
    const ChunkProgram& c = r.chunks[static_cast<std::size_t>(p.chunk)];
    return p.backward ? c.backward : c.forward;
  }

  // ---- the compute stream -------------------------------------------------------------------

  /// Runs rank `st` as far as it can at the current time: starts its next op, or blocks.
  void advance(std::int64_t st);

  /// The host issues `op` (after a host_sync, once the GPU is done at `gpu_ready`): the host clock
  /// moves on by the op's host time; returns when the GPU may start the op.
  SimTime issue(std::int64_t st, const LayerOp& op, SimTime gpu_ready, const PipelinePass& pass);
  /// The next op index of the current pass (its host issue not done yet).
  void next_op(RankState& r, std::size_t op) {
    r.op = op;
    r.op_issued = false;
  }

  /// Whether the pass's input has arrived (and, for a chunk's first forward, its parameters).
  bool ready_to_start(std::int64_t st, const PipelinePass& pass);

  /// Runs consecutive kernels as one event (they hold the compute stream back to back), stopping
  /// after a unit whose gradients become ready so the DP hooks fire on time.
  void run_kernels(std::int64_t st, const PipelinePass& pass);

  void record_trace(std::int64_t st, const LayerOp& op, SimTime start, SimTime end, const PipelinePass& pass);

  /// A blocking collective of the layer. With distinct EP ranks an EP collective is a barrier: it
  /// starts when the last rank of the group reaches it and ends for all when the most loaded
  /// rank's traffic is through.
  void start_comm(std::int64_t st, const PipelinePass& pass, const LayerOp& op);

  /// Seconds the rank's current op hides under combined 1F1B (0 unless its pass runs paired).
  double ep_hidden_now(const RankState& r) const {
    if (r.partner.empty() || r.partner[r.pass] < 0) return 0;
    const PipelinePass& pass = r.order[r.pass];
    const ChunkProgram& c = r.chunks[static_cast<std::size_t>(pass.chunk)];
    const std::vector<double>& hidden = pass.backward ? c.backward_ep_hidden : c.forward_ep_hidden;
    return r.op < hidden.size() ? hidden[r.op] : 0.0;
  }

  void barrier_flow_done(std::int64_t stage, std::int64_t seq);

  /// The rank's current blocking op (a collective, or a host_sync wait) that began at `start` is over:
  /// account its time to its kind and go on.
  void finish_blocking_op(std::int64_t st, SimTime start);

  /// Gradient hooks: in a chunk's last backward, finished units fill DP buckets.
  void on_op_done(std::int64_t st, const PipelinePass& pass, std::size_t op_index);

  /// Ends a pass: sends its output to the rank that needs it. Returns true when the send blocks.
  bool end_pass(std::int64_t st, const PipelinePass& pass);

  /// The stage (and pass there) that consumes this pass's output.
  std::optional<std::pair<std::int64_t, PipelinePass>> destination(const PipelinePass& p, std::int64_t i) const;

  void deliver(std::int64_t to, std::size_t k, std::int64_t trace_event);

  const collective::GroupPlacement& group_of(program::CommGroup g) const {
    const auto& groups = costs_.groups();
    switch (g) {
      case program::CommGroup::kCp: return groups.cp;
      case program::CommGroup::kEp: return groups.ep;
      case program::CommGroup::kEtp: return groups.etp;
      case program::CommGroup::kTp:
      case program::CommGroup::kNone: break;
    }
    return groups.tp;
  }

  // ---- the data-parallel stream -------------------------------------------------------------

  double dp_ranks(bool expert) const {
    return static_cast<double>(expert ? s_.parallel.edp(s_.system.gpus) : s_.parallel.dp);
  }

  void flush_buckets(std::int64_t st, bool partial);

  /// With the distributed optimizer and overlap_param_gather, each chunk's parameters are gathered
  /// bucket by bucket ahead of its first forward (the previous step's optimizer updated the shards).
  void issue_parameter_gathers(std::int64_t st);

  void enqueue_gathers(std::int64_t st, std::int32_t chunk);
  /// Whether op `op_index` of a forward pass must still wait for its chunk's parameter buckets:
  /// Megatron gathers bucket by bucket ahead of the layers that use them, so op i of n needs the
  /// first ceil((i+1)·buckets/n) buckets (parameters spread over the ops in order).
  [[nodiscard]] bool gather_blocked(const RankState& r, const PipelinePass& pass, std::size_t op_index,
                                    std::size_t ops) const;

  void enqueue_dp(std::int64_t st, DpJob job);

  void start_next_dp(std::int64_t st);

  static const char* dp_name(const DpJob& job) {
    if (job.replicas) return "expert_replica_grad_all_reduce";
    if (job.op == Op::kAllGather) return job.expert ? "expert_param_all_gather" : "param_all_gather";
    if (job.op == Op::kAllReduce) return job.expert ? "expert_grad_all_reduce" : "grad_all_reduce";
    return job.expert ? "expert_grad_reduce_scatter" : "grad_reduce_scatter";
  }

  void finish_dp(std::int64_t st, const DpJob& job);

  // ---- end of the step ----------------------------------------------------------------------

  /// After the last backward: reduce what was not reduced during it, wait for the DP stream, step
  /// the optimizer, and gather parameters now if that is not overlapped with the next forward.
  void begin_drain(std::int64_t st);

  void after_drain(std::int64_t st);

  void finish_rank(std::int64_t st);

  // ---- result -------------------------------------------------------------------------------

  SimOutput finish();

  const Scenario& s_;
  SimOptions options_;
  schedule::StepShape shape_;  // before costs_, loads_ and ports_, which are built from it
  program::LayerCostModel costs_;
  std::vector<schedule::StageLayers> stages_;
  std::vector<schedule::RankParams> params_;
  moe::ExpertLoadModel loads_;
  moe::ExpertLoadModel profile_;  ///< the EPLB window's routing (moe.placement.profile, else loads_'s)
  program::RaggedExpertCost expert_cost_{costs_.kernels()};  ///< the expert ops of a rank under skew
  engine::EventQueue queue_;  // before ports_: the flow networks hold a reference to it
  PortNetwork ports_;
  std::vector<RankState> ranks_;
  std::int64_t m_ = 1, vpp_ = 1;
  std::int64_t ep_sim_ = 1;  ///< EP ranks simulated per stage (1: replicated, ep: distinct under skew)
  bool ragged_ = false;      ///< MoE with skewed routing: expert ops follow each rank's drawn loads
  /// EP collectives in progress per stage, by sequence number.
  std::vector<std::map<std::int64_t, EpBarrier>> barriers_;
  std::map<std::int64_t, RoutingDraw> load_cache_;
  std::map<std::int32_t, moe::ExpertPlacement> placements_;
  bool placed_ = false;  ///< EPLB places the experts (moe.placement, ep > 1); else contiguous
  double replica_share_ = 0;  ///< program::replica_gradient_share
  double imbalance_sum_ = 0, imbalance_max_ = 1.0, dropped_ = 0;
  /// Per MoE layer: drawn tokens per expert summed over micro-batches, the draws, the worst imbalance
  /// (the result's per-layer × per-expert load table).
  /// The EP rank-pair bytes of `layer`'s dispatch and combine at its mean drawn loads.
  DispatchMatrixResult dispatch_matrix_of(std::int32_t layer);
  struct LayerLoadSum {
    std::vector<double> tokens;
    std::int64_t draws = 0;
    double balanced = 0;  ///< balanced tokens per expert per draw
    double worst = 1.0;
  };
  std::map<std::int32_t, LayerLoadSum> layer_loads_;
  std::int64_t imbalance_draws_ = 0;
  Timeline timeline_;
  std::unique_ptr<TrackRecorder> tracks_;
};

}  // namespace moesim::sim::detail
