#pragma once
// One GPU of the training proxy: the stack's weights, FP32 main grads and Adam states, the activations
// each layer saves for its backward, and the step — forward and backward of every micro-batch
// (RMSNorm, QKV and output projections, the attention core, router, permute, NCCL all-to-all
// dispatch and combine, the expert GEMMs over the drawn ragged loads, SwiGLU, unpermute, shared
// expert or dense MLP), the DP gradient all-reduce and the AdamW update. The computed values are
// random-data products: the proxy times the work of the shapes, it does not train anything.
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <nccl.h>

#include "calibrate/proxy/phase_clock.hpp"
#include "calibrate/proxy/rank_plan.hpp"
#include "kernels/attention.hpp"
#include "kernels/blas_context.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/gemm_lt.hpp"
#include "kernels/stream.hpp"
#include "record/validation_workload.hpp"

namespace moesim::proxy {

/// The communicators of one rank; null where the group has one member (nothing to exchange).
struct RankComms {
  ncclComm_t ep = nullptr;      ///< the EP group: dispatch and combine
  ncclComm_t dp = nullptr;      ///< every rank (TP 1): dense gradients
  ncclComm_t expert_dp = nullptr;  ///< ranks holding the same experts: expert gradients
};

class ProxyRank {
 public:
  /// Allocates everything on the current device (the caller has set it) and uploads the routing maps.
  ProxyRank(const ValidationWorkload& w, std::int64_t rank, RankComms comms);
  ~ProxyRank();
  ProxyRank(const ProxyRank&) = delete;
  ProxyRank& operator=(const ProxyRank&) = delete;

  /// One training step; marks `clock` (may be null) after every block.
  void step(PhaseClock* clock);
  [[nodiscard]] cudaStream_t stream() const { return stream_.get(); }

 private:
  struct Scores;  // the unfused attention's softmax output, dropout mask and dropout output
  struct Saved;   // what one layer keeps for its backward
  struct Device;  // the device copies of one (layer, micro-batch)'s routing maps

  void forward_layer(std::int64_t layer, std::int64_t mb, PhaseClock* clock);
  void backward_layer(std::int64_t layer, std::int64_t mb, const std::uint16_t* d_out, std::uint16_t* d_in,
                      PhaseClock* clock);
  void attention_forward(std::int64_t layer, Saved& s, PhaseClock* clock);
  void core_forward(Saved& s);
  void core_backward(Saved& s);
  void activation_forward(const std::uint16_t* in, std::int64_t rows, std::int64_t ffn, std::uint16_t* out);
  void activation_backward(const std::uint16_t* in, const std::uint16_t* d_out, std::int64_t rows, std::int64_t ffn,
                           std::uint16_t* d_in);
  void attention_backward(std::int64_t layer, Saved& s, const std::uint16_t* d_out, std::uint16_t* d_in,
                          PhaseClock* clock);
  void mlp_forward(std::int64_t layer, std::int64_t mb, Saved& s, std::uint16_t* out, PhaseClock* clock);
  void mlp_backward(std::int64_t layer, std::int64_t mb, Saved& s, const std::uint16_t* d_out, std::uint16_t* d_in,
                    PhaseClock* clock);
  void experts_forward(std::int64_t layer, std::int64_t mb, Saved& s, std::uint16_t* out);
  void experts_backward(std::int64_t layer, std::int64_t mb, Saved& s, const std::uint16_t* d_out,
                        std::uint16_t* d_in);
  /// Permuted rows `from` to the ranks of their experts, expert-sorted into `to` (`scratch`: the rows
  /// as received, peer-major, before the regroup).
  void dispatch(const RoutingPlan& plan, const Device& maps, const std::uint16_t* from, std::uint16_t* scratch,
                std::uint16_t* to, PhaseClock* clock);
  /// Expert-sorted rows `from` back to the ranks of their tokens, into `to` in permuted order.
  void combine(const RoutingPlan& plan, const Device& maps, const std::uint16_t* from, std::uint16_t* scratch,
               std::uint16_t* to, PhaseClock* clock);
  void all_to_all(const std::uint16_t* send, const std::vector<std::int64_t>& send_rows, std::uint16_t* recv,
                  const std::vector<std::int64_t>& recv_rows);
  void gemm(kernels::GemmLayout layout, std::int64_t m, std::int64_t n, std::int64_t k, const void* x, const void* w,
            void* y, bool accumulate = false);
  [[nodiscard]] Saved& saved(std::int64_t layer);
  [[nodiscard]] const std::uint16_t* weight(std::int64_t layer, std::int64_t offset) const;
  [[nodiscard]] float* grad(std::int64_t layer, std::int64_t offset);

  const ValidationWorkload& w_;
  RankComms comms_;
  LayerParams params_;
  bool full_recompute_ = false, unfused_ = false, save_scores_ = false;
  std::int64_t rows_ = 0;  ///< tokens × topk routed by this rank per micro-batch
  kernels::Stream stream_;
  kernels::BlasContext blas_;
  /// cuBLASLt plans by (layout, m, n, k, FP32 accumulate, pointer alignment).
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, bool, unsigned>, std::unique_ptr<kernels::LtMatmul>>
      plans_;
  std::vector<std::vector<RoutingPlan>> routing_;  ///< [layer][micro-batch]
  std::vector<std::vector<std::unique_ptr<Device>>> maps_;
  // Model state, one contiguous range per layer: dense parameters first, then the local experts'.
  std::vector<kernels::DeviceBuffer<std::uint16_t>> weights_;
  std::vector<kernels::DeviceBuffer<float>> grads_, master_, adam_m_, adam_v_;
  // Activations: the layer inputs (one more for the stack's output), the saved sets (one per layer,
  // or one shared set under full recompute), the attention core's working set, and scratch.
  std::vector<kernels::DeviceBuffer<std::uint16_t>> inputs_;
  std::vector<std::unique_ptr<Saved>> saved_;
  std::unique_ptr<kernels::Attention> core_;
  kernels::DeviceBuffer<std::uint16_t> score_grad_;  ///< unfused: the gradient of the dropout output
  std::unique_ptr<Scores> working_scores_;           ///< unfused without saved scores: the recomputed ones
  kernels::DeviceBuffer<float> logits_f32_;
  kernels::DeviceBuffer<std::uint16_t> scratch_rows_[4];  ///< [max(tokens, rows, received) × hidden]
  kernels::DeviceBuffer<std::uint16_t> scratch_wide_[2];  ///< the widest intermediate (QKV, fc1 outputs)
  kernels::DeviceBuffer<std::uint16_t> grad_io_[2];       ///< [tokens × hidden] gradients between layers
  kernels::DeviceBuffer<std::uint16_t> grad_mid_, grad_norm_;  ///< inside a layer: after the MLP, into a norm
  int adam_step_ = 0;
};

}  // namespace moesim::proxy
