#pragma once
// What a simulation or estimate computes (../shared/spec/scenario.md "Result", schema moesim.result/1).
// Produced by estimate/ (and later sim/); written by report/, which only reads it.
#include <cstdint>
#include <string>
#include <vector>

#include "record/breakdown_category.hpp"
#include "scenario/fidelity.hpp"
#include "scenario/scenario.hpp"

namespace moesim {

struct StageMemory {
  std::int64_t stage = 0;
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;  ///< communication buffers, CUDA context, allocator reserve
  double peak_bytes = 0;
  /// Where the stage's per-op memory timeline peaks, e.g. "forward of micro-batch 7, chunk 1,
  /// layer 12 (MoE)" (memory/memory_timeline.hpp).
  std::string peak_op;
};

struct MemoryResult {
  double peak_bytes = 0;  ///< largest per-GPU peak over all ranks
  double capacity_bytes = 0;
  bool fits = true;
  std::vector<StageMemory> per_stage;
};

/// Seconds per category (BreakdownCategory) on the critical rank. compute + bubble + optimizer +
/// exposed_comm (+ host_idle) equals the step time; exposed_comm is the sum of the *_comm entries, each
/// the part of that traffic not hidden under compute (offload_comm: activation offloading's host-link
/// copies the GPU waits for).
struct Breakdown {
  double compute = 0;  ///< forward + backward (+ recompute) kernels
  double tp_comm = 0;
  double cp_comm = 0;
  double ep_comm = 0;
  double pp_comm = 0;
  double dp_comm = 0;
  double offload_comm = 0;
  double bubble = 0;
  double exposed_comm = 0;
  double optimizer = 0;
  /// The GPU waiting for the host at MoE token-count read-backs (moe.host_sync_idle_s; 0 when unset).
  double host_idle = 0;
  double moe_imbalance = 1.0;  ///< max/mean tokens per EP rank (1 = balanced)
  std::int64_t critical_stage = 0;  ///< pipeline stage the breakdown is read on (the bottleneck)

  /// The seconds field of category `c`: writers and tables iterate kBreakdownCategoryNames through it
  /// instead of naming every field.
  [[nodiscard]] double& seconds(BreakdownCategory c) {
    switch (c) {
      case BreakdownCategory::kCompute: return compute;
      case BreakdownCategory::kTpComm: return tp_comm;
      case BreakdownCategory::kCpComm: return cp_comm;
      case BreakdownCategory::kEpComm: return ep_comm;
      case BreakdownCategory::kPpComm: return pp_comm;
      case BreakdownCategory::kDpComm: return dp_comm;
      case BreakdownCategory::kOffloadComm: return offload_comm;
      case BreakdownCategory::kBubble: return bubble;
      case BreakdownCategory::kExposedComm: return exposed_comm;
      case BreakdownCategory::kOptimizer: return optimizer;
      case BreakdownCategory::kHostIdle: return host_idle;
    }
    return compute;  // not reached: the switch names every category (-Wswitch checks it)
  }
  [[nodiscard]] double seconds(BreakdownCategory c) const { return const_cast<Breakdown&>(*this).seconds(c); }
};

/// Layout figures derived from the scenario, echoed so a reader need not recompute them.
struct DerivedLayout {
  std::int64_t dp = 1;
  std::int64_t edp = 1;
  std::int64_t num_microbatches = 1;
  std::int64_t num_nodes = 1;
  std::vector<std::int64_t> layers_per_stage;  ///< per pipeline rank (all its virtual chunks)
};

/// One simulated rank's step, for per-rank utilisation (fidelity simulation).
struct RankActivity {
  std::int64_t rank = 0;   ///< global rank (Megatron order tp-cp-ep-dp-pp)
  std::int64_t stage = 0;  ///< pipeline stage
  std::int64_t ep_rank = 0;  ///< position in the stage's EP group (0 when EP ranks are replicated)
  double end_s = 0;        ///< when its optimizer step (and any exposed parameter gather) ends
  double compute_s = 0;    ///< kernels, optimizer included
  double comm_wait_s = 0;  ///< blocked on communication (TP, CP, EP, PP, DP)
  double idle_s = 0;       ///< waiting for another stage (pipeline bubble), the host (host_sync) or the step's end
};

/// Traffic of one modelled link (a rank's NVLink or network port, one direction).
struct LinkActivity {
  std::string name;         ///< e.g. "rank 8 nic out"
  double bytes = 0;
  double busy_s = 0;        ///< time with at least one flow
  double utilisation = 0;   ///< bytes / (capacity · step time)
  double peak_utilisation = 0;
};

/// One MoE layer's drawn loads, averaged over the micro-batches the simulation routed through it.
struct LayerExpertLoad {
  std::int64_t layer = 0;               ///< transformer layer index
  std::vector<double> expert_load;      ///< tokens per expert / the balanced share (1 = balanced), by expert id
  double max_rank_imbalance = 1.0;      ///< worst max/mean tokens per EP rank over this layer's draws
};

/// Bytes between EP rank pairs in one MoE layer's dispatch and combine for one micro-batch
/// (moe/dispatch_matrix.hpp), row-major [source][destination]; the diagonal stays on the rank.
struct DispatchMatrixResult {
  std::int64_t layer = -1;  ///< the transformer layer (the first MoE layer a simulated rank routes)
  std::int64_t ranks = 0;   ///< EP group size
  std::vector<double> dispatch_bytes, combine_bytes;
};

/// Expert loads the simulation drew (fidelity simulation, MoE models).
struct RoutingResult {
  bool present = false;
  std::int64_t draws = 0;        ///< (MoE layer, micro-batch) routings drawn
  double mean_imbalance = 1.0;   ///< mean over draws of max/mean tokens per EP rank
  double max_imbalance = 1.0;    ///< the worst draw
  double drop_rate = 0;          ///< fraction of token copies dropped by the capacity factor
  std::vector<LayerExpertLoad> layers;  ///< per MoE layer routed by a simulated rank, by layer index
  DispatchMatrixResult dispatch_matrix;  ///< the first of those layers at its mean drawn loads
};

/// What the event simulation ran (fidelity simulation only).
struct SimulationInfo {
  bool present = false;
  std::int64_t ranks_total = 0;      ///< GPUs of the scenario
  std::int64_t ranks_simulated = 0;  ///< ranks run op by op; the others are replicas of one of them
  std::string replication;           ///< which ranks stand for which, and why that is exact
  std::int64_t events = 0;
  std::int64_t flows = 0;
  std::vector<RankActivity> ranks;
  std::vector<LinkActivity> links;   ///< the busiest links, most bytes first
};

/// A what-if scenario's (whatif.kernel_speedup) same question without the speed-ups, predicted at the
/// same fidelity: what the report shows beside the what-if.
struct WhatIfBaseline {
  bool present = false;
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
  Breakdown breakdown;
};

struct Result {
  Scenario scenario;
  Fidelity fidelity = Fidelity::kEstimate;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_step = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  model::FlopsConvention flops_convention = model::FlopsConvention::kMegatron;
  model::ParamCounts params;
  DerivedLayout layout;
  MemoryResult memory;
  Breakdown breakdown;
  SimulationInfo simulation;
  RoutingResult routing;
  WhatIfBaseline whatif_baseline;  ///< present when the scenario asks a what-if
  std::vector<std::string> warnings;
  std::uint64_t seed = 0;
  std::string moesim_version;
};

}  // namespace moesim
