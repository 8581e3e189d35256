#pragma once
// One what-if question, as understood after loading (../shared/spec/scenario.md version 1): every
// default filled in. config/ builds it from JSON; estimate/ and (later) sim/ answer it; report/ echoes it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/named_enum.hpp"
#include "core/precision.hpp"
#include "hw/profile.hpp"
#include "hw/system_spec.hpp"
#include "model/counts.hpp"
#include "model/model_spec.hpp"
#include "scenario/offload.hpp"
#include "scenario/recompute_module.hpp"
#include "scenario/routing_histogram.hpp"
#include "hw/host_costs.hpp"
#include "scenario/runtime.hpp"
#include "scenario/whatif.hpp"

namespace moesim {

struct TrainingSpec {
  std::int64_t seq_length = 0;
  std::int64_t micro_batch_size = 1;
  std::int64_t global_batch_size = 0;  ///< sequences per optimizer step
};

/// Megatron-Core parallel sizes. dp is derived (gpus / (tp·cp·pp)); the expert grid uses
/// etp·ep·edp·pp over the same GPUs (MoE parallel folding), so edp = gpus / (etp·ep·pp).
struct ParallelSpec {
  std::int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, etp = 1, dp = 1;
  bool sequence_parallel = false;  ///< default: true when tp > 1
  bool tp_comm_overlap = false;    ///< TE userbuffers overlap of TP all-gather/reduce-scatter with GEMMs
  /// Megatron's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split:
  /// the embedding (loss) takes one layer's slot in the first (last) model chunk, so
  /// num_layers + those slots split evenly over pp·vpp chunks (Llama-3.1-405B's 126 + 2 = 128).
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  [[nodiscard]] std::int64_t pipeline_split_slots() const {
    return (account_for_embedding_in_pipeline_split ? 1 : 0) + (account_for_loss_in_pipeline_split ? 1 : 0);
  }
  [[nodiscard]] std::int64_t model_parallel() const { return tp * cp * pp; }
  [[nodiscard]] std::int64_t edp(std::int64_t gpus) const { return gpus / (etp * ep * pp); }
};

enum class RecomputeGranularity { kNone, kSelective, kFull };
inline constexpr auto kRecomputeGranularityNames = std::to_array<EnumName<RecomputeGranularity>>(
    {{RecomputeGranularity::kNone, "none"}, {RecomputeGranularity::kSelective, "selective"},
     {RecomputeGranularity::kFull, "full"}});

struct RecomputeSpec {
  RecomputeGranularity granularity = RecomputeGranularity::kNone;
  /// Megatron --recompute-modules for selective recompute (core_attn by default), in the order the
  /// user wrote them: the scenario echo and recompute_label print them back in that order.
  std::vector<RecomputeModule> modules;
  /// Whether `module` is replayed in the backward: every module under full recompute, none under "none".
  [[nodiscard]] bool has(RecomputeModule module) const;
};

enum class Dispatcher { kAlltoall, kAllgather, kDeepep, kHybridep };
inline constexpr auto kDispatcherNames = std::to_array<EnumName<Dispatcher>>(
    {{Dispatcher::kAlltoall, "alltoall"}, {Dispatcher::kAllgather, "allgather"}, {Dispatcher::kDeepep, "deepep"},
     {Dispatcher::kHybridep, "hybridep"}});

enum class RoutingDistribution { kBalanced, kUniform, kZipf, kLognormal, kDirichlet, kHistogram };
inline constexpr auto kRoutingDistributionNames = std::to_array<EnumName<RoutingDistribution>>(
    {{RoutingDistribution::kBalanced, "balanced"}, {RoutingDistribution::kUniform, "uniform"},
     {RoutingDistribution::kZipf, "zipf"}, {RoutingDistribution::kLognormal, "lognormal"},
     {RoutingDistribution::kDirichlet, "dirichlet"}, {RoutingDistribution::kHistogram, "histogram"}});

struct RoutingSpec {
  RoutingDistribution distribution = RoutingDistribution::kBalanced;
  double zipf_s = 0;            ///< "s" (zipf)
  double lognormal_sigma = 0;   ///< "sigma" (lognormal)
  double dirichlet_alpha = 0;   ///< "alpha" (dirichlet)
  std::string histogram_file;   ///< "file" (histogram), as written in the scenario
  /// The histogram file's contents, checked against the model (config/routing_histogram); set by
  /// the scenario loader when distribution is histogram. Shared: scenarios are copied freely.
  std::shared_ptr<const RoutingHistogram> histogram;
  bool per_layer_variation = false;
  bool per_step_variation = false;
  std::int64_t device_limited_nodes = 0;  ///< DeepSeek's M; 0 = unlimited
};

/// Where each MoE layer's experts live on its EP group (scenario `moe.placement`).
enum class PlacementStrategy { kContiguous, kEplb };
inline constexpr auto kPlacementStrategyNames = std::to_array<EnumName<PlacementStrategy>>(
    {{PlacementStrategy::kContiguous, "contiguous"}, {PlacementStrategy::kEplb, "eplb"}});

/// Megatron places experts contiguously (EP rank j holds experts [j·E/ep, (j+1)·E/ep)). EPLB
/// (DeepSeek's expert-parallel load balancer) replicates the hottest experts into
/// `redundant_experts` extra slots and places every replica so that the most loaded rank carries as
/// little as possible, from the loads of a profile window: the `rebalance_interval_steps` steps
/// before the ones it serves, drawn from `profile` (the scenario's own routing when unset). It is
/// judged on the step's fresh draws, never on the loads it was computed from (moe/placement_window).
struct PlacementSpec {
  PlacementStrategy strategy = PlacementStrategy::kContiguous;
  std::int64_t redundant_experts = 0;         ///< extra expert slots over the EP group (eplb)
  std::int64_t rebalance_interval_steps = 1;  ///< steps one placement serves; its window is the interval before
  std::optional<RoutingSpec> profile;         ///< the window's routing; unset = moe.routing
  [[nodiscard]] bool eplb() const { return strategy == PlacementStrategy::kEplb; }
  /// Expert slots per EP rank over the experts a contiguous rank holds: (E + redundant) / E.
  [[nodiscard]] double replication(std::int64_t experts) const {
    return eplb() && experts > 0 ? static_cast<double>(experts + redundant_experts) / static_cast<double>(experts)
                                 : 1.0;
  }
};

/// DeepEP and HybridEP: kernels that send a token once per destination rank or domain (not once per
/// expert) and run on a few SMs of their own.
[[nodiscard]] constexpr bool deduplicates(Dispatcher d) { return d == Dispatcher::kDeepep || d == Dispatcher::kHybridep; }

struct MoeSpec {
  Dispatcher dispatcher = Dispatcher::kAlltoall;
  std::optional<double> capacity_factor;  ///< nullopt = dropless
  /// Megatron --moe-pad-expert-input-to-capacity: every expert processes exactly its capacity
  /// (capacity_factor × its balanced share): the router fills each expert with its most probable
  /// tokens, dropping above the capacity and padding below it, so expert GEMMs and all-to-alls run
  /// at fixed shapes, capacity_factor × the balanced work, whatever the skew.
  bool pad_to_capacity = false;
  RoutingSpec routing;
  PlacementSpec placement;
  /// Expert work (and all-to-all rows) per routed copy under balanced routing: capacity_factor with
  /// pad_to_capacity, else 1. The estimate costs MoE layers at this scale; the simulation's load
  /// factors are relative to it.
  [[nodiscard]] double balanced_load_scale() const { return pads_to_capacity() ? *capacity_factor : 1.0; }
  /// Every expert filled to the same capacity: routing skew no longer loads one EP rank more.
  [[nodiscard]] bool pads_to_capacity() const { return pad_to_capacity && capacity_factor.has_value(); }
  bool grouped_gemm = true;
  /// Megatron --overlap-moe-expert-parallel-comm ("combined 1F1B", Megatron-Core
  /// docs/user-guide/features/moe_a2a_overlap.md): in the steady state a forward and a backward pass
  /// of different micro-batches run together, layer by layer, so that each one's dispatch and combine
  /// hide behind the other's attention and expert compute (program/ep_overlap.hpp).
  bool a2a_overlap = false;
  /// SMs the DeepEP / HybridEP dispatch and combine kernels occupy (Megatron moe_deepep_num_sms,
  /// moe_hybridep_num_sms); unset = Megatron-Core's defaults, 20 and 24 (transformer_config.py).
  /// Under a2a_overlap the overlapped compute runs on the other SMs (NCCL's all-to-all holds its
  /// point-to-point channels' SMs instead: program/ep_overlap.hpp).
  std::optional<std::int64_t> dispatcher_sms;
  /// The dispatch moves FP8 tokens (1 byte per element and one fp32 scale per 128) instead of the
  /// 16-bit hidden states. DeepSeek-V3's own stack does (its DeepEP FP8 dispatch); Megatron-Core's
  /// flex dispatcher does not: it hands DeepEP the bf16 hidden states and HybridEP asserts
  /// `not fp8_dispatch` (NVIDIA/Megatron-LM megatron/core/transformer/moe/fused_a2a.py, commit
  /// 02ad939), and Transformer Engine quantises the tokens after they arrive. DeepEP / HybridEP with
  /// a low-precision recipe only; the combine stays 16-bit either way.
  bool fp8_dispatch = false;
  /// The SMs the DeepEP / HybridEP kernels run on: dispatcher_sms, else Megatron-Core's default
  /// (moe_deepep_num_sms 20, moe_hybridep_num_sms 24); 0 for the NCCL-based dispatchers.
  [[nodiscard]] std::int64_t kernel_sms() const {
    if (dispatcher == Dispatcher::kDeepep) return dispatcher_sms.value_or(20);
    if (dispatcher == Dispatcher::kHybridep) return dispatcher_sms.value_or(24);
    return 0;
  }
  /// Extra seconds the GPU idles at each MoE layer forward (and each recomputed forward) after the
  /// token-count read-back, on top of what the host model prices (program/host_ops: the host waits for
  /// the GPU there and loses its lead; docs/accuracy.md, Round 8): a residual measured on the user's
  /// own stack (an Nsight Systems profile's GPU gap after the read-back), priced as a `host_sync` op and
  /// the `host_idle` breakdown category. 0 (the default): none. Padded-to-capacity runs have fixed
  /// shapes and no read-back: it does not apply to them.
  double host_sync_idle_s = 0;
  /// Whether Megatron's dispatcher reads the token counts back to the host each MoE forward: every
  /// run but a padded one (token_dispatcher.py MoEAlltoAllTokenDispatcher: "no_sync" only with
  /// drop_and_pad; a capacity factor without padding syncs even earlier, "before_permutation_1").
  [[nodiscard]] bool reads_token_counts_back() const { return !pads_to_capacity(); }
  [[nodiscard]] bool pays_host_sync() const { return host_sync_idle_s > 0 && reads_token_counts_back(); }
};

struct OptimizerSpec {
  bool distributed = true;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  /// Megatron --fp8-param-gather: the model keeps its GEMM weights only in FP8 (no 16-bit copy) and
  /// the distributed optimizer all-gathers them in FP8. Per-tensor and blockwise FP8 (MXFP8 keeps
  /// gathering 16-bit weights: Megatron MoE README "50 % parameter all-gather (except MXFP8)").
  bool fp8_param_gather = false;
  /// Megatron --fp4-param-gather (NVFP4 only): as fp8_param_gather, with the weights kept and
  /// all-gathered in NVFP4 (4-bit values + one E4M3 scale per 16).
  bool fp4_param_gather = false;
  /// Megatron --accumulate-allreduce-grads-in-fp32 (DDP grad_reduce_in_fp32): the main_grad buffer
  /// and the gradient reduce-scatter are fp32 (Megatron-LM's default under bf16) or, when false,
  /// bf16 (what Megatron-Bridge's performance recipes run: scripts/performance/configs/*).
  bool grad_reduce_in_fp32 = true;
  /// The optimizer keeps only the 16 bits an fp32 master weight has beyond its bf16 model weight
  /// (Apex DistributedFusedAdam store_param_remainders, which NeMo 1.x turns on for bf16 O2 training;
  /// Megatron-Core OptimizerConfig.store_param_remainders with --use-precision-aware-optimizer): the
  /// optimizer state is 2 + 4 + 4 = 10 bytes per parameter instead of 12. Needs 16-bit bf16 weights.
  bool store_param_remainders = false;
};

/// How the attention core runs. "flash" (fused FlashAttention / cuDNN kernel, the default today) or
/// "unfused" (QKᵀ GEMM, softmax, dropout and PV as separate kernels, as Megatron ran in 2021).
enum class AttentionBackend { kFlash, kUnfused };
inline constexpr auto kAttentionBackendNames = std::to_array<EnumName<AttentionBackend>>(
    {{AttentionBackend::kFlash, "flash"}, {AttentionBackend::kUnfused, "unfused"}});

struct Scenario {
  std::string name;
  std::string file;  ///< the scenario file it came from ("" for built-in)
  /// How the model was named: a preset name, "hf_config:PATH", or "" for a full definition.
  std::string model_ref;
  model::ModelSpec model;
  hw::SystemSpec system;
  /// system.topology as written ("" = a preset): the cluster was derived from this topology file
  /// (relative to the scenario's folder; docs/topology.md), its figures' origins in system.sources.
  std::string topology_file;
  /// Assumptions made while loading that the result must report (a topology file no preset matches).
  std::vector<std::string> load_warnings;
  std::string profile;  ///< system.profile as written: a profile file or a checked-in name ("" = datasheet figures)
  /// The profile system.profile names, read and checked against system.gpu by the loader (nullptr:
  /// none). Shared: scenarios are copied freely (docs/profile.md).
  std::shared_ptr<const hw::Profile> calibration;
  TrainingSpec training;
  ParallelSpec parallel;
  Precision precision = Precision::kBf16;
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  ///< with precision fp8 only; Megatron-Core's default
  RecomputeSpec recompute;
  MoeSpec moe;
  OptimizerSpec optimizer;
  RuntimeSpec runtime;
  OffloadSpec offload;
  WhatIfSpec whatif;  ///< kernel speed-ups asked of the prediction (1 everywhere = none)
  /// Host seconds per framework op of each host kind: the fitted constants
  /// (calibrate/fitted/constants.json), filled in by config for every scenario it reads.
  hw::HostCosts host_costs;
  AttentionBackend attention_backend = AttentionBackend::kFlash;
  model::FlopsConvention flops_convention = model::FlopsConvention::kMegatron;
  std::uint64_t seed = 0;

  /// Seconds the runtime's host spends per framework op: its kind's fitted figure divided by
  /// runtime.host.relative_speed (0: the host is not priced).
  [[nodiscard]] double host_op_seconds() const {
    return host_costs.op_seconds(runtime.host.kind) / runtime.host.relative_speed.value_or(1.0);
  }

  /// Micro-batches each pipeline runs per step: global_batch / (micro_batch · dp).
  [[nodiscard]] std::int64_t num_microbatches() const {
    return training.global_batch_size / (training.micro_batch_size * parallel.dp);
  }
};

[[nodiscard]] std::string_view to_string(RecomputeGranularity g);
[[nodiscard]] std::string_view to_string(Dispatcher d);
[[nodiscard]] std::string_view to_string(RoutingDistribution d);
[[nodiscard]] std::string_view to_string(PlacementStrategy p);
[[nodiscard]] std::string_view to_string(AttentionBackend b);

/// Cross-field rules of a loaded scenario (divisibility, GPU count, precision support). Throws
/// InputError naming the JSON path, the value and the rule (e.g. `/parallel/tp`: "tp must divide
/// model.num_attention_heads (32)" with the allowed values). Called by config/ after parsing; also
/// usable by the planner to prune a candidate.
void validate_layout(const Scenario& s);

/// Whether moe.a2a_overlap can run with this layout (Megatron's rules, validate_layout's message):
/// an MoE model with ep > 1, a dispatcher other than allgather, no full recompute, and pp 1 or
/// vpp > 1. The planner keeps a base scenario's a2a_overlap only on candidates where it can.
[[nodiscard]] bool a2a_overlap_possible(const Scenario& s);
/// Whether moe.fp8_dispatch can apply (validate_layout's rule): a deduplicating dispatcher in a
/// low-precision recipe. The planner keeps a base scenario's fp8_dispatch only where it can.
[[nodiscard]] bool fp8_dispatch_possible(const Scenario& s);

}  // namespace moesim
