#pragma once
// Cost of one transformer layer (and of the embedding / LM head) for one micro-batch on one rank:
// the kernels it runs and the TP / CP / EP traffic it waits for, at fidelity "estimate".
#include <cstdint>

#include "collective/closed_form.hpp"
#include "compute/kernel_cost.hpp"
#include "scenario/scenario.hpp"

namespace moesim::estimate {

/// Seconds of one pass (forward, backward or recompute) split by what the rank is doing.
/// The *_comm fields are the exposed parts (not hidden under compute).
struct PassCost {
  double compute = 0;
  double tp_comm = 0;
  double cp_comm = 0;
  double ep_comm = 0;
  [[nodiscard]] double total() const { return compute + tp_comm + cp_comm + ep_comm; }
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

/// Process groups of the layout and where they sit on the system (Megatron rank order tp-cp-ep-dp-pp,
/// expert grid etp-ep-edp-pp).
struct GroupLayout {
  collective::GroupPlacement tp, cp, ep, etp, dp, edp, pp;
};
[[nodiscard]] GroupLayout place_groups(const Scenario& s);

/// Per-scenario cost model of the layer kinds; create once, query per layer kind.
class LayerCostModel {
 public:
  explicit LayerCostModel(const Scenario& s);

  /// A transformer layer: `moe` selects the MoE block, `key_span` the attention span (seq or window).
  [[nodiscard]] UnitCost transformer_layer(bool moe, std::int64_t key_span) const;
  /// Input embedding (first pipeline stage).
  [[nodiscard]] UnitCost embedding() const;
  /// LM head + cross-entropy (last stage), once per prediction head (1 + MTP depth).
  [[nodiscard]] UnitCost output_head() const;
  /// The extra projection of one MTP module (its transformer layer is costed separately).
  [[nodiscard]] UnitCost mtp_projection() const;

  [[nodiscard]] const GroupLayout& groups() const { return groups_; }
  [[nodiscard]] const compute::KernelCostModel& kernels() const { return kernels_; }

 private:
  struct Gemm {
    std::int64_t m, n, k, batch;
  };
  void add_gemm(UnitCost& c, Gemm g, bool recomputed) const;
  void add_memory_op(UnitCost& c, double forward_bytes, double backward_bytes, bool recomputed) const;
  void add_tp_collective(UnitCost& c, collective::Op fwd_op, double bytes, double overlap_window_s,
                         bool recomputed) const;
  void add_attention(UnitCost& c, std::int64_t key_span) const;
  void add_dense_mlp(UnitCost& c, std::int64_t width, bool recomputed) const;
  void add_moe(UnitCost& c) const;
  [[nodiscard]] bool recomputes(const char* module) const;

  const Scenario& s_;
  compute::KernelCostModel kernels_;
  GroupLayout groups_;
  std::int64_t tokens_ = 0;     ///< tokens of this rank's sequence slice: mbs·seq/cp
  std::int64_t sp_tokens_ = 0;  ///< tokens held between blocks: tokens/tp with sequence parallelism
  bool full_recompute_ = false;
  /// Set while a transformer layer is costed: full recompute re-runs only what is inside one.
  mutable bool in_layer_ = false;
};

}  // namespace moesim::estimate
