#pragma once
// The scenario's field tables (../shared/spec/scenario.md): every field's key, member, range, meaning,
// and any default not given by the struct's initializer, declared once here. config/ reads a scenario
// by visiting them (config/scenario_field_reader.hpp), report/ echoes one (report/scenario_json.cpp)
// and writes the field reference in docs/ (report/field_reference.cpp), and the CLI takes a field's
// flag name, help and range from them (cli/field_option.hpp).
//
// A visitor V provides, for members of a `Scenario` or a `const Scenario`:
//   section(info, inner)                  an object of fields; inner(visitor) visits them
//   special(info, member)                 a field with its own reader and writer (model, system,
//                                         recompute, routing)
//   constant(info, text)                  a fixed string (the schema)
//   text(info, member)                    a string
//   integer(info, member, range[, derive]) an integral member
//   number(info, member, range)           a double
//   optional_integer / optional_number    std::optional members: absent or null = unset
//   boolean(info, member[, derive])
//   enumeration(info, member, table)      an enum with its name table (core/named_enum.hpp)
//   enumeration_list(info, member, table) a list of names from an enum's table (runtime.fusions)
//   special(info, member)                 also the CUDA-graph scopes and the host (runtime)
// Fields are visited in reading order: a file with several mistakes reports the first in this order.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/value_range.hpp"
#include "scenario/field.hpp"
#include "scenario/scenario.hpp"

namespace moesim::scenario_fields {

// Bounds of the integer and number fields. Far above any real run (the largest published clusters
// have ~10^5 GPUs, the longest trained contexts ~10^6 tokens), they refuse absurd inputs (10^12 GPUs,
// seq 2^40) before any allocation or overflowing product: every product of parallel sizes stays
// below 2^63.
inline constexpr std::int64_t kMaxGpus = 1'048'576;  ///< 2^20
inline constexpr IntRange kGpus{1, kMaxGpus};
inline constexpr IntRange kParallelSize{1, kMaxGpus};
inline constexpr IntRange kSeqLength{1, 16'777'216};         ///< 2^24 tokens
inline constexpr IntRange kMicroBatch{1, 65'536};
inline constexpr IntRange kGlobalBatch{1, 16'777'216};       ///< sequences per step
inline constexpr IntRange kDeviceLimitedNodes{0, kMaxGpus};  ///< 0 = unlimited
inline constexpr IntRange kDispatcherSms{1, 1024};            ///< the GPU's SM count is checked later
/// Extra expert slots over an EP group: DeepSeek-V3's inference deployment keeps 32 for 256 experts
/// (one per GPU of its EP32 prefill units); beyond 2^16 no model has experts to replicate.
inline constexpr IntRange kRedundantExperts{0, 65'536};
inline constexpr IntRange kRebalanceIntervalSteps{1, 1'000'000};
inline constexpr IntRange kSeed{0, std::numeric_limits<std::int64_t>::max()};
inline constexpr NumberRange kCapacityFactor{0.0, 1024.0, true};
/// Per MoE layer forward; published eager runs differ by 4.45 to 8.05 ms (docs/accuracy.md, Round 5),
/// so a second is far past any real figure and catches a value given in milliseconds.
inline constexpr NumberRange kHostSyncIdleS{0.0, 1.0, false};
inline constexpr NumberRange kZipfS{0.0, 100.0, true};
inline constexpr NumberRange kLognormalSigma{0.0, 100.0, false};
inline constexpr NumberRange kDirichletAlpha{0.0, 1e6, true};
/// A host's speed relative to its kind's reference: a host 100× faster or slower is not a CPU.
inline constexpr NumberRange kRelativeHostSpeed{0.0, 100.0, true};
inline constexpr NumberRange kFraction{0.0, 1.0, false};  ///< a share of something, 0 to 1
/// A kernel 10^3 times faster or slower than predicted is no longer the same kernel.
inline constexpr NumberRange kKernelSpeedup{0.0, 1000.0, true};

template <typename S>
concept ScenarioRef = std::is_same_v<std::remove_const_t<S>, Scenario>;

template <typename V, ScenarioRef S>
void visit_training(V& v, S& s) {
  auto& t = s.training;
  v.integer(FieldInfo{.key = "seq_length", .doc = "tokens per sequence", .cli_flag = "--seq", .required = true},
            t.seq_length, kSeqLength);
  v.integer(FieldInfo{.key = "micro_batch_size", .doc = "sequences per micro-batch"}, t.micro_batch_size, kMicroBatch);
  v.integer(FieldInfo{.key = "global_batch_size",
                      .doc = "sequences per optimizer step (all data-parallel ranks, all micro-batches)",
                      .cli_flag = "--global-batch",
                      .required = true},
            t.global_batch_size, kGlobalBatch);
  v.enumeration(FieldInfo{.key = "attention_backend",
                          .doc = "flash: a fused FlashAttention / cuDNN kernel; unfused: QKᵀ GEMM, softmax, "
                                 "dropout and PV as separate kernels (Megatron in 2021)"},
                s.attention_backend, kAttentionBackendNames);
}

template <typename V, ScenarioRef S>
void visit_parallel(V& v, S& s) {
  auto& p = s.parallel;
  v.integer(FieldInfo{.key = "tp", .doc = "tensor-parallel size (Megatron --tensor-model-parallel-size)"}, p.tp,
            kParallelSize);
  v.integer(FieldInfo{.key = "pp", .doc = "pipeline-parallel size"}, p.pp, kParallelSize);
  v.integer(FieldInfo{.key = "vpp", .doc = "virtual stages per pipeline rank (interleaved schedule when > 1)"}, p.vpp,
            kParallelSize);
  v.integer(FieldInfo{.key = "cp", .doc = "context-parallel size"}, p.cp, kParallelSize);
  v.integer(FieldInfo{.key = "ep", .doc = "expert-parallel size"}, p.ep, kParallelSize);
  v.integer(FieldInfo{.key = "etp", .doc = "expert tensor-parallel size", .derived_default = "tp"}, p.etp,
            kParallelSize, DeriveFn<Scenario, std::int64_t>{[](const Scenario& x) { return x.parallel.tp; }});
  // A given dp that disagrees is reported by validate_layout, after the divisibility it depends on.
  v.integer(FieldInfo{.key = "dp",
                      .doc = "data-parallel size; derived, and if given it must agree",
                      .derived_default = "gpus / (tp·cp·pp)"},
            p.dp, kParallelSize, DeriveFn<Scenario, std::int64_t>{[](const Scenario& x) {
              return std::max<std::int64_t>(1, x.system.gpus / x.parallel.model_parallel());
            }});
  v.boolean(FieldInfo{.key = "sequence_parallel",
                      .doc = "Megatron sequence parallelism over the TP group",
                      .derived_default = "tp > 1"},
            p.sequence_parallel, DeriveFn<Scenario, bool>{[](const Scenario& x) { return x.parallel.tp > 1; }});
  v.boolean(FieldInfo{.key = "tp_comm_overlap",
                      .doc = "TE userbuffers overlap of the TP all-gather / reduce-scatter with the GEMMs"},
            p.tp_comm_overlap);
  v.boolean(FieldInfo{.key = "account_for_embedding_in_pipeline_split",
                      .doc = "the embedding takes one layer's slot in the first model chunk (Megatron "
                             "--account-for-embedding-in-pipeline-split)"},
            p.account_for_embedding_in_pipeline_split);
  v.boolean(FieldInfo{.key = "account_for_loss_in_pipeline_split",
                      .doc = "the loss takes one layer's slot in the last model chunk (Megatron "
                             "--account-for-loss-in-pipeline-split)"},
            p.account_for_loss_in_pipeline_split);
}

template <typename V, typename P>
void visit_placement(V& v, P& p) {
  v.enumeration(FieldInfo{.key = "strategy",
                          .doc = "contiguous (Megatron: EP rank j holds experts j·E/ep to (j+1)·E/ep − 1) or eplb "
                                 "(DeepSeek's balancer: hot experts replicated, replicas spread over the ranks)"},
                p.strategy, kPlacementStrategyNames);
  v.integer(FieldInfo{.key = "redundant_experts",
                      .doc = "eplb: extra expert slots over the EP group; (num_moe_experts + redundant_experts) "
                             "must divide by ep"},
            p.redundant_experts, kRedundantExperts);
  v.integer(FieldInfo{.key = "rebalance_interval_steps",
                      .doc = "eplb: steps one placement serves; it is computed from the loads of the interval "
                             "before"},
            p.rebalance_interval_steps, kRebalanceIntervalSteps);
  v.special(FieldInfo{.key = "profile",
                      .doc = "eplb: the routing of the profile window the placement is computed from (a routing "
                             "spec or a measured histogram)",
                      .derived_default = "moe.routing"},
            p.profile);
}

template <typename V, ScenarioRef S>
void visit_moe(V& v, S& s) {
  auto& m = s.moe;
  v.enumeration(FieldInfo{.key = "dispatcher", .doc = "the MoE token dispatcher"}, m.dispatcher, kDispatcherNames);
  v.optional_number(FieldInfo{.key = "capacity_factor", .doc = "tokens an expert takes, × its balanced share; unset = dropless"},
                    m.capacity_factor, kCapacityFactor);
  v.boolean(FieldInfo{.key = "pad_to_capacity",
                      .doc = "every expert processes exactly its capacity (Megatron "
                             "--moe-pad-expert-input-to-capacity; needs capacity_factor)"},
            m.pad_to_capacity);
  v.special(FieldInfo{.key = "routing", .doc = "expert popularity: balanced, uniform, zipf, lognormal, dirichlet or a measured histogram"},
            m.routing);
  v.section(FieldInfo{.key = "placement", .doc = "where the experts live: contiguous, or EPLB with redundant experts"},
            [&](auto& inner) { visit_placement(inner, m.placement); });
  v.boolean(FieldInfo{.key = "grouped_gemm", .doc = "the experts of a rank run as one grouped GEMM"}, m.grouped_gemm);
  v.boolean(FieldInfo{.key = "a2a_overlap",
                      .doc = "combined 1F1B: each pass's dispatch and combine hide behind another micro-batch's "
                             "compute (Megatron --overlap-moe-expert-parallel-comm)"},
            m.a2a_overlap);
  v.optional_integer(FieldInfo{.key = "dispatcher_sms",
                               .doc = "SMs the DeepEP / HybridEP kernels occupy; unset = Megatron-Core's defaults, 20 "
                                      "and 24"},
                     m.dispatcher_sms, kDispatcherSms);
  v.boolean(FieldInfo{.key = "fp8_dispatch",
                      .doc = "DeepEP / HybridEP dispatch FP8 tokens (DeepSeek-V3's stack); false = the 16-bit hidden "
                             "states, as Megatron-Core's flex dispatcher does"},
            m.fp8_dispatch);
  v.number(FieldInfo{.key = "host_sync_idle_s",
                     .doc = "measured seconds the GPU idles at each MoE layer forward after the token-count "
                            "read-back, on top of the host model's own wait (runtime; docs/accuracy.md, Round 8); 0 = "
                            "none",
                     .cli_flag = "--host-sync-idle-s"},
           m.host_sync_idle_s, kHostSyncIdleS);
}

template <typename V, ScenarioRef S>
void visit_optimizer(V& v, S& s) {
  auto& o = s.optimizer;
  v.boolean(FieldInfo{.key = "distributed", .doc = "optimizer state sharded over the data-parallel ranks"}, o.distributed);
  v.boolean(FieldInfo{.key = "overlap_grad_reduce", .doc = "gradient reduce-scatter overlapped with the backward"},
            o.overlap_grad_reduce);
  v.boolean(FieldInfo{.key = "overlap_param_gather", .doc = "parameter all-gather overlapped with the next forward"},
            o.overlap_param_gather);
  v.boolean(FieldInfo{.key = "fp8_param_gather",
                      .doc = "GEMM weights kept and all-gathered in FP8 only (Megatron --fp8-param-gather)"},
            o.fp8_param_gather);
  v.boolean(FieldInfo{.key = "fp4_param_gather",
                      .doc = "GEMM weights kept and all-gathered in NVFP4 (Megatron --fp4-param-gather)"},
            o.fp4_param_gather);
  v.boolean(FieldInfo{.key = "grad_reduce_in_fp32",
                      .doc = "fp32 gradient buffer and reduce-scatter; false = bf16 (Megatron-Bridge's recipes)"},
            o.grad_reduce_in_fp32);
  v.boolean(FieldInfo{.key = "store_param_remainders",
                      .doc = "the optimizer keeps the 16-bit remainder of each fp32 master weight beside the bf16 "
                             "weight: 10 bytes of state per parameter instead of 12 (Apex DistributedFusedAdam, "
                             "NeMo 1.x; Megatron --use-precision-aware-optimizer)"},
            o.store_param_remainders);
}

template <typename V, ScenarioRef S>
void visit_runtime(V& v, S& s) {
  auto& r = s.runtime;
  v.special(FieldInfo{.key = "cuda_graph",
                      .doc = "CUDA-graph scopes: \"none\" (eager), or a list of layer, attn, mlp, moe, moe_router, "
                             "moe_preprocess, mamba, full_iteration (Megatron --cuda-graph-impl / --cuda-graph-scope)"},
            r.cuda_graph);
  v.special(FieldInfo{.key = "host",
                      .doc = "the CPU that launches the kernels: \"x86\", \"grace\", or a number, the host's speed "
                             "relative to the system's host kind",
                      .derived_default = "the system's host (topologies/systems/*.json)"},
            r.host);
  v.enumeration_list(FieldInfo{.key = "fusions",
                               .doc = "kernel fusions on (the list replaces the default: [] turns every one off)"},
                     r.fusions, kFusionNames);
}

template <typename V, ScenarioRef S>
void visit_offload(V& v, S& s) {
  auto& o = s.offload;
  v.enumeration_list(FieldInfo{.key = "activations",
                               .doc = "modules whose saved inputs go to host memory after their forward and come "
                                      "back before their backward, over PCIe or NVLink-C2C (Megatron "
                                      "--fine-grained-activation-offloading --offload-modules)"},
                     o.activations, kOffloadModuleNames);
  v.number(FieldInfo{.key = "optimizer_fraction",
                     .doc = "share of the optimizer state kept and stepped on the host (Megatron "
                            "--optimizer-cpu-offload --optimizer-offload-fraction); 0 = none"},
           o.optimizer_fraction, kFraction);
}

template <typename V, ScenarioRef S>
void visit_whatif(V& v, S& s) {
  v.section(FieldInfo{.key = "kernel_speedup",
                      .doc = "{OP_CLASS: factor}: the class's ops run factor× as fast (2 = twice as fast); "
                             "the result shows the prediction without it beside (docs/whatif.md)"},
            [&](auto& inner) {
              for (const OpClassInfo& c : kOpClasses) {
                inner.number(FieldInfo{.key = c.name, .doc = c.doc},
                             s.whatif.kernel_speedup[static_cast<std::size_t>(c.op_class)], kKernelSpeedup);
              }
            });
}

/// The whole scenario, top-level keys in reading order.
template <typename V, ScenarioRef S>
void visit_scenario(V& v, S& s) {
  v.constant(FieldInfo{.key = "schema", .doc = "the contract's version; optional on input"}, "moesim.scenario/1");
  v.text(FieldInfo{.key = "name", .doc = "a label for reports"}, s.name);
  v.special(FieldInfo{.key = "model",
                      .doc = "a preset name, {\"preset\": ...}, {\"hf_config\": FILE} or a full definition",
                      .required = true},
            s.model);
  v.special(FieldInfo{.key = "system",
                      .doc = "{\"preset\": NAME, \"gpus\": N} or {\"topology\": FILE}; optional \"gpu\" and \"profile\"",
                      .required = true},
            s.system);
  v.section(FieldInfo{.key = "training", .doc = "sequences and batch", .required = true},
            [&](auto& inner) { visit_training(inner, s); });
  v.section(FieldInfo{.key = "parallel", .doc = "the Megatron-Core layout"}, [&](auto& inner) { visit_parallel(inner, s); });
  v.enumeration(FieldInfo{.key = "precision", .doc = "GEMM precision; a format the GPU lacks is an error"}, s.precision,
                kPrecisionNames);
  v.enumeration(FieldInfo{.key = "fp8_recipe",
                          .doc = "how precision fp8 scales its tensors (Megatron --fp8-recipe): delayed (an amax "
                                 "history, Transformer Engine's DelayedScaling, Megatron-Core's default) or "
                                 "tensorwise (current scaling); other precisions ignore it"},
                s.fp8_recipe, kFp8RecipeNames);
  v.special(FieldInfo{.key = "recompute",
                      .doc = "none, selective (attention core), full, or {\"granularity\": \"selective\", "
                             "\"modules\": [...]}"},
            s.recompute);
  v.section(FieldInfo{.key = "moe", .doc = "MoE dispatch and routing"}, [&](auto& inner) { visit_moe(inner, s); });
  v.section(FieldInfo{.key = "optimizer", .doc = "distributed optimizer and gradient reduction"},
            [&](auto& inner) { visit_optimizer(inner, s); });
  v.section(FieldInfo{.key = "runtime", .doc = "the software stack: CUDA graphs, host, fusions"},
            [&](auto& inner) { visit_runtime(inner, s); });
  v.section(FieldInfo{.key = "offload", .doc = "activations and optimizer state moved to host memory"},
            [&](auto& inner) { visit_offload(inner, s); });
  v.section(FieldInfo{.key = "whatif", .doc = "questions on the software: kernels made faster"},
            [&](auto& inner) { visit_whatif(inner, s); });
  v.integer(FieldInfo{.key = "seed", .doc = "seed of every random draw (routing samples)"}, s.seed, kSeed);
  v.enumeration(FieldInfo{.key = "flops_convention",
                          .doc = "how model FLOPs are counted: Megatron's convention, or full-s2"},
                s.flops_convention, model::kFlopsConventionNames);
}

}  // namespace moesim::scenario_fields
