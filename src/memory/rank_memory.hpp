#pragma once
// Per-rank memory of one pipeline stage, every term separately, in bytes (docs/memory.md lists each
// formula with its source). Pure arithmetic over the scenario and the stage plan: no allocation, so
// the planner can call it for every candidate layout.
#include <cstdint>

#include "scenario/scenario.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::memory {

/// Knobs that are not part of the scenario yet. Defaults follow Megatron-Core / Korthikanti 2022.
struct MemoryOptions {
  /// Routed token copies on the most-loaded rank over the balanced mean (1 = balanced). Capped by
  /// moe.capacity_factor when the scenario sets one.
  double expert_load_factor = 1.0;
  /// CUDA context + cuBLAS/cuDNN/TE workspaces per GPU (docs/memory.md: ~0.5 GiB CUDA 12 context on
  /// H100 plus workspaces).
  double cuda_context_bytes = 0.6 * 1024.0 * 1024.0 * 1024.0;
  /// NCCL channel buffers per communicator this rank belongs to (NCCL_BUFFSIZE 4 MiB × protocols ×
  /// channels × peers; docs/memory.md).
  double nccl_bytes_per_group = 0.25 * 1024.0 * 1024.0 * 1024.0;
  /// PyTorch caching-allocator fragmentation as a share of the activations and working buffers
  /// (Megatron's ×1.05 on its activation estimate).
  double fragmentation_share = 0.05;
};

/// Activation bytes one transformer layer saves for its backward pass, per micro-batch, on one rank,
/// split so that tests can check each part against its source.
struct LayerActivation {
  double attention_bytes = 0;  ///< input norm + attention block (incl. 5·a·s²·b/t when unfused)
  double mlp_bytes = 0;        ///< pre-MLP norm + dense MLP, or router + shared experts of an MoE layer
  double routed_bytes = 0;     ///< routed expert copies on this rank (inputs, fc1 outputs, activations, metadata)
  [[nodiscard]] double total() const { return attention_bytes + mlp_bytes + routed_bytes; }
};

struct RankMemory {
  // Model state.
  double dense_params = 0;             ///< non-expert parameters on this rank
  double expert_params = 0;            ///< routed-expert parameters on this rank
  double weights_bytes = 0;            ///< 16-bit model weights (bf16/fp16 params)
  double low_precision_weight_bytes = 0;  ///< Transformer Engine's FP8/MXFP8/NVFP4 weight caches (+scales)
  double gradients_bytes = 0;          ///< main-grad buffer (fp32 for bf16, fp16 for fp16)
  double optimizer_bytes = 0;          ///< fp32 master + Adam m, v (+ fp32 grad copy for fp16), sharded if distributed
  // Activations.
  double inflight_microbatches = 0;    ///< peak micro-batches in flight, in whole-stage equivalents
  double activations_bytes = 0;        ///< saved layer activations × micro-batches in flight (+ embedding)
  double activation_working_bytes = 0; ///< one-at-a-time: recomputed layer, MoE permute buffers, logits
  // Runtime.
  double comm_buffers_bytes = 0;       ///< NCCL buffers of every communicator of this rank
  double cuda_context_bytes = 0;       ///< CUDA context and library workspaces
  double fragmentation_bytes = 0;      ///< caching-allocator fragmentation
  [[nodiscard]] double model_state_bytes() const {
    return weights_bytes + low_precision_weight_bytes + gradients_bytes + optimizer_bytes;
  }
  [[nodiscard]] double total_bytes() const {
    return model_state_bytes() + activations_bytes + activation_working_bytes + comm_buffers_bytes +
           cuda_context_bytes + fragmentation_bytes;
  }
};

/// Saved activations of one layer (`moe_layer` selects the MoE block) per micro-batch on one rank.
[[nodiscard]] LayerActivation layer_activation(const Scenario& s, bool moe_layer, const MemoryOptions& opt = {});

/// The saved bytes the scenario's offload.activations modules move to host memory, per layer per
/// micro-batch (layer_activation is what stays on the GPU).
[[nodiscard]] LayerActivation layer_offload(const Scenario& s, bool moe_layer, const MemoryOptions& opt = {});

/// Bytes per parameter of model state: 16-bit weight, main grad, optimizer state over `shards`
/// ranks (1 = not distributed). bf16: 2 + 4 + 12/shards (2 + 2 + 12/shards with bf16 grads);
/// fp16: 2 + 2 + 16/shards.
struct BytesPerParam {
  double weight = 0, grad = 0, optimizer = 0;
  [[nodiscard]] double total() const { return weight + grad + optimizer; }
};
/// `grads_in_fp32` is OptimizerSpec::grad_reduce_in_fp32 (false: a bf16 main_grad buffer);
/// `param_remainders` OptimizerSpec::store_param_remainders (10 bytes of state instead of 12).
[[nodiscard]] BytesPerParam bytes_per_param(Precision p, bool distributed_optimizer, double shards,
                                            bool grads_in_fp32 = true, bool param_remainders = false);

/// Extra bytes per GEMM weight parameter for Transformer Engine's low-precision copies
/// (0 for bf16/fp16); `architecture` is GpuSpec::architecture.
[[nodiscard]] double low_precision_copy_bytes_per_param(Precision p, std::string_view architecture);

/// Forward chunk passes in flight at the peak on pipeline rank `rank`: Megatron's warm-up count plus
/// the first steady-state forward, capped by the micro-batch·chunk total. 1F1B: min(pp − rank, m);
/// interleaved: min(2·(pp − rank − 1) + (vpp − 1)·pp + 1, m·vpp).
[[nodiscard]] std::int64_t inflight_chunk_passes(std::int64_t rank, std::int64_t pp, std::int64_t vpp,
                                                 std::int64_t microbatches);

/// Saved bytes per micro-batch of the embedding (stage 0, chunk 0): int64 token ids and the
/// embedding-dropout mask (when the model trains with hidden dropout).
[[nodiscard]] double embedding_activation_bytes(const Scenario& s);
/// Saved bytes per micro-batch of one MTP module beyond its transformer layer: the eh_proj input [2h].
[[nodiscard]] double mtp_input_bytes(const Scenario& s);
/// One-at-a-time bytes while one layer of this kind runs its forward (`backward` false) or backward:
/// the MoE dispatch/combine buffers of an MoE layer, plus in a backward under full recompute the
/// layer's activations rebuilt as if nothing were recomputed.
[[nodiscard]] double layer_working_bytes(const Scenario& s, bool moe_layer, bool backward, const MemoryOptions& opt = {});
/// One-at-a-time bytes of the output head per micro-batch: vocab-parallel logits (16-bit) and the
/// fp32 copy the cross-entropy works on, for the main head and every MTP head.
[[nodiscard]] double logits_bytes(const Scenario& s);

/// Memory of one rank of pipeline stage `pipeline_stage`, whose layers are `stage`
/// (schedule::plan_stages(s)[pipeline_stage]). The most loaded rank of the stage under the options.
/// The total is the largest saved-activation level plus the largest one-at-a-time buffer of the
/// stage: an upper bound of the per-op timeline's peak (memory_timeline.hpp), equal to it when the
/// layer running at the saved peak is the one with the largest buffer.
[[nodiscard]] RankMemory rank_memory(const Scenario& s, std::int64_t pipeline_stage,
                                     const schedule::StageLayers& stage, const MemoryOptions& opt = {});

}  // namespace moesim::memory
