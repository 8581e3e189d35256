#pragma once
// Cost of one transformer layer (and of the embedding / LM head) for one micro-batch on one rank:
// the kernels it runs and the TP / CP / EP traffic it waits for, at fidelity "estimate".
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "collective/closed_form.hpp"
#include "collective/cost_model.hpp"
#include "compute/kernel_cost.hpp"
#include "core/named_enum.hpp"
#include "program/host_gate.hpp"
#include "record/breakdown_category.hpp"
#include "scenario/scenario.hpp"
#include "schedule/step_shape.hpp"

namespace moesim::program {

/// Seconds of one pass (forward, backward or recompute) split by what the rank is doing.
/// The *_comm fields are the exposed parts (not hidden under compute).
struct PassCost {
  double compute = 0;
  double tp_comm = 0;
  double cp_comm = 0;
  double ep_comm = 0;
  double offload_comm = 0;  ///< waiting for activation offload / reload copies (offload.activations)
  double host_idle = 0;  ///< the GPU waiting for the host (moe.host_sync_idle_s)
  [[nodiscard]] double total() const { return compute + tp_comm + cp_comm + ep_comm + offload_comm + host_idle; }
  PassCost& operator+=(const PassCost& o);
  [[nodiscard]] PassCost scaled(double k) const;
};

/// Forward, backward (data + weight gradients) and the recomputed forward work of one unit.
struct UnitCost {
  PassCost forward;
  PassCost backward;   ///< includes the recomputed forward work
  PassCost recompute;  ///< the recompute share of `backward`, reported separately
  UnitCost& operator+=(const UnitCost& o);
  [[nodiscard]] UnitCost scaled(double k) const;
};

/// What an op keeps the rank busy with; communication inside a layer blocks the layer's next kernel
/// (Megatron waits on TP, CP and EP collectives before it can go on). kHostIdle: the compute stream
/// waits for the host to issue the next kernels (moe.host_sync_idle_s): no kernel runs and nothing
/// overlaps it. kOffloadComm: the compute stream waits for the copy engine's activation offload or
/// reload over the host link (the part the layer's own work does not hide).
enum class OpKind : std::uint8_t { kCompute, kTpComm, kCpComm, kEpComm, kOffloadComm, kHostIdle };
/// Which pass an op belongs to. kDgrad / kWgrad are the two halves of a GEMM's backward; kRecompute
/// is forward work re-run at the start of the backward (activation recomputation).
enum class OpPhase : std::uint8_t { kForward, kBackward, kDgrad, kWgrad, kRecompute };
/// The process group a communication op runs over (which decides the links it crosses).
enum class CommGroup : std::uint8_t { kNone, kTp, kCp, kEp, kEtp };
/// The breakdown category an op's time is accounted in (PassCost's field, the trace's event
/// category); an op kind is spelled as its category.
[[nodiscard]] constexpr BreakdownCategory category_of(OpKind k) {
  switch (k) {
    case OpKind::kCompute: return BreakdownCategory::kCompute;
    case OpKind::kTpComm: return BreakdownCategory::kTpComm;
    case OpKind::kCpComm: return BreakdownCategory::kCpComm;
    case OpKind::kEpComm: return BreakdownCategory::kEpComm;
    case OpKind::kOffloadComm: return BreakdownCategory::kOffloadComm;
    case OpKind::kHostIdle: return BreakdownCategory::kHostIdle;
  }
  return BreakdownCategory::kCompute;  // not reached: the switch names every kind
}
inline constexpr auto kOpPhaseNames = std::to_array<EnumName<OpPhase>>(
    {{OpPhase::kForward, "forward"}, {OpPhase::kBackward, "backward"}, {OpPhase::kDgrad, "dgrad"},
     {OpPhase::kWgrad, "wgrad"}, {OpPhase::kRecompute, "recompute"}});
[[nodiscard]] std::string_view to_string(OpKind k);
[[nodiscard]] std::string_view to_string(OpPhase p);

/// One kernel or one blocking collective of a unit (layer, embedding, head) for one micro-batch.
struct LayerOp {
  const char* name = "";  ///< static text: "qkv", "attention", "fc1", "dispatch", ...
  OpKind kind = OpKind::kCompute;
  OpPhase phase = OpPhase::kForward;
  double seconds = 0;    ///< time it holds the rank (for communication: the exposed part)
  double latency_s = 0;  ///< communication: the size-independent part of `seconds`
  double bytes = 0;      ///< communication: bytes this rank sends; memory-bound kernels: bytes moved
  double flops = 0;      ///< GEMMs and attention: floating-point operations on this rank
  CommGroup group = CommGroup::kNone;
  /// The MoE block's expert GEMMs (expert_fc1 / expert_fc2) only: `seconds` costs them as one
  /// batched GEMM of local_experts × grouped_m copies (balanced); these say which, so that the
  /// simulation can re-cost the group over a rank's ragged per-expert loads (compute/grouped_gemm,
  /// the part — forward, dgrad, wgrad — following `phase`). local_experts is 0 for every other op.
  std::int64_t grouped_m = 0, grouped_n = 0, grouped_k = 0, local_experts = 0;
  Precision grouped_precision = Precision::kBf16;
  /// Host seconds to issue the op (program/host_ops: its framework ops × the host's seconds per op;
  /// 0 inside a captured CUDA graph). The GPU cannot start it before the host has issued it.
  double host_s = 0;
  /// The host waits for the GPU to finish everything issued before this op, then issues it (the
  /// dropless dispatcher's token-count read-back).
  bool host_sync = false;
  /// whatif.kernel_speedup's factor already applied to `seconds` and `latency_s` (1 = none;
  /// program/kernel_speedup).
  double speedup = 1.0;
};

/// The ops of one unit in the order the rank runs them. `backward` starts with the recomputed
/// forward ops (in forward order), then the gradient ops in reverse order of the forward.
struct OpProgram {
  std::vector<LayerOp> forward;
  std::vector<LayerOp> backward;
  /// Seconds per pass and kind, the estimator's view of the same ops.
  [[nodiscard]] UnitCost cost() const;
};


/// Per-scenario cost model of the layer kinds; create once, query per layer kind.
class LayerCostModel {
 public:
  /// `log`: collect every kernel shape queried (moesim calibrate); the expert GEMMs are then queried
  /// as the grouped GEMMs a profile would price.
  LayerCostModel(const Scenario& s, const schedule::StepShape& shape, compute::KernelQueryLog* log = nullptr);

  /// A transformer layer: `moe` selects the MoE block, `key_span` the attention span (seq or window).
  [[nodiscard]] OpProgram transformer_layer_ops(bool moe, std::int64_t key_span) const;
  /// Input embedding (first pipeline stage).
  [[nodiscard]] OpProgram embedding_ops() const;
  /// LM head + cross-entropy (last stage), once per prediction head (1 + MTP depth).
  [[nodiscard]] OpProgram output_head_ops() const;
  /// The extra projection of one MTP module (its transformer layer is costed separately).
  [[nodiscard]] OpProgram mtp_projection_ops() const;

  [[nodiscard]] UnitCost transformer_layer(bool moe, std::int64_t key_span) const {
    return transformer_layer_ops(moe, key_span).cost();
  }

  /// Ops and their per-pass sums of transformer layer `layer`. Layers of one kind (dense or MoE,
  /// same attention span) cost the same, so each kind is built once per model and cached.
  struct LayerKind {
    OpProgram ops;
    UnitCost cost;
    HostGate forward_gate, backward_gate;  ///< the host and GPU clocks over each pass (host_gate.hpp)
  };
  [[nodiscard]] const LayerKind& layer(std::int64_t layer) const;
  [[nodiscard]] UnitCost embedding() const { return embedding_ops().cost(); }
  [[nodiscard]] UnitCost output_head() const { return output_head_ops().cost(); }
  [[nodiscard]] UnitCost mtp_projection() const { return mtp_projection_ops().cost(); }

  [[nodiscard]] const schedule::GroupLayout& groups() const { return shape_.groups; }
  [[nodiscard]] const schedule::StepShape& shape() const { return shape_; }
  [[nodiscard]] const compute::KernelCostModel& kernels() const { return kernels_; }
  /// Collective times (the closed form, or the scenario's calibration profile) for both fidelities.
  [[nodiscard]] const collective::CollectiveCostModel& collectives() const { return comms_; }

 private:
  struct Gemm {
    std::int64_t m, n, k, batch;
  };
  /// Ops of a unit while it is built: backward ops are collected in forward order and reversed
  /// when the unit is finished.
  struct Builder {
    std::vector<LayerOp> forward, recompute, backward_in_forward_order;
    /// Full recompute checkpoints whole transformer layers: set while one is built.
    bool checkpointed = false;
    [[nodiscard]] OpProgram finish();
  };
  void add_gemm(Builder& c, const char* name, Gemm g, bool recomputed, Precision precision) const;
  /// Appends a GEMM's forward, data- and weight-gradient ops with these kernel times (plus the
  /// low-precision recipes' operand casts).
  void push_gemm(Builder& c, const char* name, Gemm g, bool recomputed, Precision precision, double fwd,
                 double dgrad, double wgrad) const;
  void add_gemm(Builder& c, const char* name, Gemm g, bool recomputed) const {
    add_gemm(c, name, g, recomputed, s_.precision);
  }
  void add_memory_op(Builder& c, const char* name, double forward_bytes, double backward_bytes, bool recomputed,
                     hw::MemoryKernel kind = hw::MemoryKernel::kCopy) const;
  /// The expert GEMMs of the MoE block: with a calibration profile each part is a grouped GEMM over
  /// `experts` equal loads of `m` rows (priced from the profile's grouped rows), else the batched GEMM.
  void add_expert_gemm(Builder& c, const char* name, Gemm g, bool recomputed) const;
  /// A communication op with the same cost forward and backward (the transposed collective).
  void add_comm(Builder& c, const char* name, OpKind kind, CommGroup group, double seconds, double latency_s,
                double bytes, bool recomputed) const;
  /// A TP collective of the embedding or the head, with the same cost forward and backward.
  void add_tp_collective(Builder& c, const char* name, collective::Op fwd_op, double bytes, double overlap_window_s,
                         bool recomputed) const;
  /// The TP communication around the column-parallel linear `g` (QKV, FC1, MLA down-projections):
  /// the all-gather of its sequence-parallel input, and in the backward the input's re-gather and the
  /// data gradient's reduce-scatter, each under a gradient GEMM.
  void add_column_parallel_comm(Builder& c, const char* name, Gemm g, bool recomputed) const;
  /// The TP communication after the row-parallel linear `g` (attention output, FC2): reduce-scatter
  /// (all-reduce without SP) of its output, and the all-gather of its output gradient in the backward.
  void add_row_parallel_comm(Builder& c, const char* name, Gemm g, bool recomputed) const;
  /// Data- and weight-gradient kernel times of GEMM `g` in `precision` (TE's split accumulator).
  [[nodiscard]] std::pair<double, double> gradient_gemm_seconds(Gemm g, Precision precision) const;
  void add_attention(Builder& c, std::int64_t key_span) const;
  /// The merge kernels of ring context parallelism around the attention core: `out_width` elements
  /// of output (and of dQ) per token, `kv_width` of K and V together.
  void add_cp_corrections(Builder& c, std::int64_t out_width, std::int64_t kv_width, bool recomputed) const;
  void add_dense_mlp(Builder& c, const char* prefix, std::int64_t width, bool recomputed) const;
  void add_moe(Builder& c) const;
  /// The host-link copies of offload.activations: the part of a layer's offload (forward) and reload
  /// (backward) its own work does not hide, as kOffloadComm ops.
  void add_activation_offload(OpProgram& p, bool moe) const;
  [[nodiscard]] bool recomputes(RecomputeModule module) const;
  /// The builder's ops in running order, with the scenario's kernel speed-ups applied.
  [[nodiscard]] OpProgram finished(Builder& c) const;
  /// The unit's ops with their host side filled in (program/host_ops).
  [[nodiscard]] OpProgram priced(OpProgram p) const;

  const Scenario& s_;
  compute::KernelCostModel kernels_;
  collective::CollectiveCostModel comms_;
  schedule::StepShape shape_;  ///< a copy, so a caller may pass a temporary
  bool full_recompute_ = false;
  /// Built layer kinds by (MoE?, attention span); a model instance is used by one thread.
  mutable std::map<std::pair<bool, std::int64_t>, LayerKind> layer_kinds_;
};

}  // namespace moesim::program
