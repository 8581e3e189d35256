// Cross-field rules of a scenario: what Megatron-Core would refuse at start-up (divisibility of the
// parallel grid, batch and sequence splits), reported as one InputError naming the field, the value,
// the rule and the values that would work.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"
#include "scenario/scenario.hpp"

namespace moesim {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

/// Divisors of n in increasing order; `limit` keeps the "allowed" list of a message short.
std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t limit = std::numeric_limits<std::int64_t>::max()) {
  std::vector<std::int64_t> low, high;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  low.erase(std::remove_if(low.begin(), low.end(), [&](std::int64_t d) { return d > limit; }), low.end());
  return low;
}

std::string list_text(const std::vector<std::int64_t>& values) {
  std::vector<std::string> out;
  out.reserve(values.size());
  for (auto v : values) out.push_back(str(v));
  return join(out);
}

bool has_dense_layer(const model::ModelSpec& m) { return !m.is_moe() || m.num_moe_layers() < m.num_layers; }

void check_positive_sizes(const Scenario& s) {
  // Programmatic scenarios (the planner) skip the loader's range checks; a zero here would divide by zero below.
  const ParallelSpec& p = s.parallel;
  const std::pair<const char*, std::int64_t> sizes[] = {{"tp", p.tp}, {"pp", p.pp}, {"vpp", p.vpp}, {"cp", p.cp},
                                                        {"ep", p.ep}, {"etp", p.etp}, {"dp", p.dp}};
  for (const auto& [key, value] : sizes) {
    if (value < 1) {
      throw InputError(std::string("/parallel/") + key, str(value), std::string(key) + " must be at least 1",
                       "integers >= 1");
    }
  }
  if (s.system.gpus < 1) throw InputError("/system/gpus", str(s.system.gpus), "gpus must be at least 1", "integers >= 1");
  if (s.training.micro_batch_size < 1) {
    throw InputError("/training/micro_batch_size", str(s.training.micro_batch_size),
                     "micro_batch_size must be at least 1", "integers >= 1");
  }
}

void check_tensor_parallel(const Scenario& s) {
  const auto& m = s.model;
  const std::int64_t tp = s.parallel.tp;
  // model::validate guarantees these; a hand-built spec without them has nothing to shard.
  if (m.num_attention_heads < 1 || m.num_query_groups < 1) return;
  const bool dense_ffn = has_dense_layer(m) && m.ffn_hidden_size > 0;
  // Every tp constraint at once, so the allowed list only offers values that pass all of them.
  std::int64_t common = std::gcd(m.num_attention_heads, m.num_query_groups);
  if (dense_ffn) common = std::gcd(common, m.ffn_hidden_size);
  const std::string allowed = list_text(divisors(common));
  if (m.num_attention_heads % tp != 0) {
    throw InputError("/parallel/tp", str(tp),
                     "tp must divide model.num_attention_heads (" + str(m.num_attention_heads) + ")", allowed);
  }
  if (m.num_query_groups % tp != 0) {
    throw InputError("/parallel/tp", str(tp), "tp must divide model.num_query_groups (" + str(m.num_query_groups) + ")",
                     allowed);
  }
  if (dense_ffn && m.ffn_hidden_size % tp != 0) {
    throw InputError("/parallel/tp", str(tp),
                     "tp must divide model.ffn_hidden_size (" + str(m.ffn_hidden_size) + ") of the dense layers", allowed);
  }
}

void check_sequence_parallel(const Scenario& s) {
  if (s.parallel.sequence_parallel && s.parallel.tp == 1) {
    throw InputError("/parallel/sequence_parallel", "true",
                     "sequence_parallel shards activations over the tensor-parallel group and needs tp > 1",
                     "false when tp = 1");
  }
  // Megatron: TP communication overlap (TE userbuffers) works on the sequence-parallel collectives.
  if (s.parallel.tp_comm_overlap && !s.parallel.sequence_parallel) {
    throw InputError("/parallel/tp_comm_overlap", "true", "tp_comm_overlap needs sequence_parallel (and tp > 1)",
                     "false without sequence_parallel");
  }
}

void check_pipeline(const Scenario& s) {
  const std::int64_t layers = s.model.num_layers, pp = s.parallel.pp, vpp = s.parallel.vpp;
  if (pp > layers) {
    throw InputError("/parallel/pp", str(pp), "pp must not exceed model.num_layers (" + str(layers) + ")",
                     "integers from 1 to " + str(layers));
  }
  if (vpp > 1 && pp == 1) {
    throw InputError("/parallel/vpp", str(vpp), "vpp > 1 interleaves pipeline stages and needs pp > 1",
                     "1 when pp = 1");
  }
  const std::int64_t slots = s.parallel.pipeline_split_slots();
  if (slots > 0) {
    // Megatron asserts the even split when the embedding or the loss counts as a layer.
    if ((layers + slots) % (pp * vpp) != 0) {
      throw InputError(s.parallel.account_for_embedding_in_pipeline_split
                           ? "/parallel/account_for_embedding_in_pipeline_split"
                           : "/parallel/account_for_loss_in_pipeline_split",
                       "true",
                       "model.num_layers + " + str(slots) + " (" + str(layers + slots) +
                           ") must divide evenly over pp·vpp = " + str(pp * vpp) + " model chunks",
                       "false, or a layout whose pp·vpp divides " + str(layers + slots));
    }
    return;
  }
  // Uneven splits are allowed (the estimator distributes layers), but no virtual stage may be empty.
  if (pp * vpp > layers) {
    throw InputError("/parallel/vpp", str(vpp),
                     "pp·vpp (" + str(pp) + "·" + str(vpp) + " = " + str(pp * vpp) +
                         ") must not exceed model.num_layers (" + str(layers) + ")",
                     "integers from 1 to " + str(layers / pp));
  }
}

void check_context_parallel(const Scenario& s) {
  const std::int64_t cp = s.parallel.cp, seq = s.training.seq_length;
  if (cp == 1 || seq % (2 * cp) == 0) return;
  // Megatron splits the sequence into 2·cp chunks so that every rank gets an equal share of causal work.
  std::vector<std::int64_t> ok{1};
  if (seq % 2 == 0) {
    for (auto c : divisors(seq / 2, s.system.gpus)) {
      if (c > 1) ok.push_back(c);
    }
  }
  throw InputError("/parallel/cp", str(cp),
                   "cp > 1 needs training.seq_length (" + str(seq) + ") divisible by 2·cp (" + str(2 * cp) + ")",
                   list_text(ok));
}

void check_gpu_count(const Scenario& s) {
  const std::int64_t gpus = s.system.gpus, per_node = s.system.gpus_per_node;
  if (per_node > 0 && gpus > per_node && gpus % per_node != 0) {
    throw InputError("/system/gpus", str(gpus),
                     "gpus above one node must fill whole nodes (" + s.system.name + " has " + str(per_node) + " GPUs per node)",
                     "1 to " + str(per_node) + ", or multiples of " + str(per_node));
  }
  const auto& p = s.parallel;
  const std::int64_t mp = p.model_parallel();
  if (gpus % mp != 0) {
    throw InputError("/system/gpus", str(gpus),
                     "gpus must be divisible by tp·cp·pp (" + str(p.tp) + "·" + str(p.cp) + "·" + str(p.pp) + " = " +
                         str(mp) + ")",
                     "multiples of " + str(mp));
  }
  if (p.dp != gpus / mp) {
    throw InputError("/parallel/dp", str(p.dp),
                     "dp must equal system.gpus / (tp·cp·pp) = " + str(gpus) + " / " + str(mp) + " = " + str(gpus / mp),
                     str(gpus / mp));
  }
}

void check_experts(const Scenario& s) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  if (!m.is_moe()) {
    if (p.ep != 1) {
      throw InputError("/parallel/ep", str(p.ep), "ep must be 1 for a dense model (model.num_moe_experts is 0)", "1");
    }
    return;
  }
  if (m.num_moe_experts % p.ep != 0) {
    throw InputError("/parallel/ep", str(p.ep), "ep must divide model.num_moe_experts (" + str(m.num_moe_experts) + ")",
                     list_text(divisors(m.num_moe_experts)));
  }
  if (m.moe_ffn_hidden_size > 0 && m.moe_ffn_hidden_size % p.etp != 0) {
    throw InputError("/parallel/etp", str(p.etp),
                     "etp must divide model.moe_ffn_hidden_size (" + str(m.moe_ffn_hidden_size) + ")",
                     list_text(divisors(m.moe_ffn_hidden_size, s.system.gpus)));
  }
  // MoE parallel folding: the expert grid etp·ep·edp·pp spans the same GPUs as tp·cp·dp·pp.
  const std::int64_t grid = p.etp * p.ep * p.pp;
  if (s.system.gpus % grid != 0) {
    std::vector<std::int64_t> ok;
    for (auto e : divisors(m.num_moe_experts)) {
      if (s.system.gpus % (p.etp * e * p.pp) == 0) ok.push_back(e);
    }
    throw InputError("/parallel/ep", str(p.ep),
                     "etp·ep·pp (" + str(p.etp) + "·" + str(p.ep) + "·" + str(p.pp) + " = " + str(grid) +
                         ") must divide system.gpus (" + str(s.system.gpus) + ")",
                     list_text(ok));
  }
}

/// moe.placement: EPLB's slots fill the EP group evenly, each expert at most once per rank.
void check_placement(const Scenario& s) {
  const PlacementSpec& pl = s.moe.placement;
  const std::int64_t experts = s.model.num_moe_experts;
  const std::int64_t ep = s.parallel.ep;
  if (!pl.eplb()) {
    const auto only_eplb = [](const char* path, const std::string& value, const char* allowed) {
      throw InputError(path, value, "only strategy \"eplb\" takes this field (moe.placement.strategy is \"contiguous\")",
                       allowed);
    };
    if (pl.redundant_experts != 0) only_eplb("/moe/placement/redundant_experts", str(pl.redundant_experts), "0");
    if (pl.rebalance_interval_steps != 1) {
      only_eplb("/moe/placement/rebalance_interval_steps", str(pl.rebalance_interval_steps), "1");
    }
    if (pl.profile) only_eplb("/moe/placement/profile", "an object", "null");
    return;
  }
  if (!s.model.is_moe()) {
    throw InputError("/moe/placement/strategy", "\"eplb\"", "expert placement needs an MoE model (num_moe_experts is 0)",
                     "\"contiguous\"");
  }
  if ((experts + pl.redundant_experts) % ep != 0) {
    const std::int64_t next = (experts + pl.redundant_experts + ep - 1) / ep * ep - experts;
    throw InputError("/moe/placement/redundant_experts", str(pl.redundant_experts),
                     "num_moe_experts + redundant_experts (" + str(experts) + " + " + str(pl.redundant_experts) +
                         ") must divide by ep (" + str(ep) + ")",
                     "a multiple of " + str(ep) + ", e.g. " + str(next));
  }
  // A rank holds an expert at most once: at most ep copies of each.
  if (pl.redundant_experts > experts * (ep - 1)) {
    throw InputError("/moe/placement/redundant_experts", str(pl.redundant_experts),
                     "a rank holds each expert at most once: at most num_moe_experts·(ep − 1) = " + str(experts) +
                         "·" + str(ep - 1) + " redundant experts",
                     "0 to " + str(experts * (ep - 1)));
  }
}

void check_batch(const Scenario& s) {
  const auto& t = s.training;
  const std::int64_t per_step = t.micro_batch_size * s.parallel.dp;
  if (t.global_batch_size % per_step != 0) {
    throw InputError("/training/global_batch_size", str(t.global_batch_size),
                     "global_batch_size must be divisible by micro_batch_size·dp (" + str(t.micro_batch_size) + "·" +
                         str(s.parallel.dp) + " = " + str(per_step) + ")",
                     "multiples of " + str(per_step));
  }
}

// Megatron-Core's interleaved schedule (pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving) runs micro-batches through the chunks in groups of
// microbatch_group_size_per_vp_stage, pp by default. Up to core_v0.9.0 it raised unless M mod pp = 0;
// since core_v0.10.0 it needs that group size in [pp, M] and M mod it 0 or >= pp. With the default
// group both come to M a multiple of pp. A last group of fewer than pp micro-batches sends rank 0
// to a chunk's next forward before the last rank has produced its input ("dependency bubbles"); in
// some layouts (pp 8, vpp 2, M 12) that input waits on rank 0's own later backward, a cycle on
// which the simulation stalled (issue 33).
void check_interleaved_microbatches(const Scenario& s) {
  const std::int64_t pp = s.parallel.pp, vpp = s.parallel.vpp;
  if (vpp <= 1) return;
  const std::int64_t m = s.num_microbatches();
  if (m % pp == 0) return;
  const std::int64_t per_pipeline = s.training.micro_batch_size * s.parallel.dp;
  throw InputError("/parallel/vpp", str(vpp),
                   "vpp > 1 needs the micro-batch count (global_batch_size / (micro_batch_size·dp) = " +
                       str(s.training.global_batch_size) + " / " + str(per_pipeline) + " = " + str(m) +
                       ") to be a multiple of pp (" + str(pp) +
                       "): Megatron-Core's interleaved schedule refuses it with the default "
                       "microbatch_group_size_per_vp_stage = pp (core_v0.10.0 on: M mod group must be 0 or >= pp; "
                       "before: M mod pp = 0)",
                   "1, or a global_batch_size that is a multiple of micro_batch_size·dp·pp = " + str(per_pipeline * pp));
}

void check_fp8_param_gather(const Scenario& s) {
  if (!s.optimizer.fp8_param_gather) return;
  const Precision p = s.precision;
  if (p == Precision::kFp8 || p == Precision::kFp8Blockwise || p == Precision::kMxfp8) return;
  throw InputError("/optimizer/fp8_param_gather", "true",
                   "fp8_param_gather keeps the weights in FP8 and needs precision fp8, fp8-blockwise or mxfp8 (precision is " +
                       std::string(to_string(p)) + ")",
                   "false, or precision fp8, fp8-blockwise, mxfp8");
}

/// Megatron's fine-grained offloading works with selective recompute (or none) and offloads the
/// expert modules of MoE layers; its optimizer offload (HybridDeviceOptimizer) lives inside the
/// distributed optimizer.
void check_offload(const Scenario& s) {
  const OffloadSpec& o = s.offload;
  if (!o.activations.empty() && s.recompute.granularity == RecomputeGranularity::kFull) {
    throw InputError("/offload/activations", std::string(to_string(o.activations.front())),
                     "full recompute keeps only each layer's input: there is nothing for a module to offload",
                     "[], or recompute none or selective");
  }
  for (OffloadModule m : {OffloadModule::kExpertFc1, OffloadModule::kMoeAct}) {
    if (o.has(m) && !s.model.is_moe()) {
      throw InputError("/offload/activations", std::string(to_string(m)),
                       std::string(to_string(m)) + " offloads the routed experts' inputs and needs an MoE model",
                       "attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm");
    }
  }
  if (o.optimizer_fraction > 0 && !s.optimizer.distributed) {
    throw InputError("/offload/optimizer_fraction", format_number(o.optimizer_fraction),
                     "optimizer offloading (Megatron's HybridDeviceOptimizer) runs inside the distributed optimizer",
                     "0, or optimizer.distributed true");
  }
}

/// A remainder completes a bf16 weight to fp32: there must be one, in bf16.
void check_store_param_remainders(const Scenario& s) {
  if (!s.optimizer.store_param_remainders) return;
  const char* rule = nullptr;
  if (s.precision == Precision::kFp16) rule = "precision fp16 keeps fp16 weights";
  else if (s.optimizer.fp8_param_gather) rule = "fp8_param_gather keeps no bf16 weight";
  else if (s.optimizer.fp4_param_gather) rule = "fp4_param_gather keeps no bf16 weight";
  if (!rule) return;
  throw InputError("/optimizer/store_param_remainders", "true",
                   std::string("store_param_remainders completes a bf16 model weight to fp32, but ") + rule,
                   "false, or bf16 weights (precision other than fp16, no fp8/fp4_param_gather)");
}

void check_fp4_param_gather(const Scenario& s) {
  if (!s.optimizer.fp4_param_gather || s.precision == Precision::kNvfp4) return;
  throw InputError("/optimizer/fp4_param_gather", "true",
                   "fp4_param_gather keeps the weights in NVFP4 and needs precision nvfp4 (precision is " +
                       std::string(to_string(s.precision)) + ")",
                   "false, or precision nvfp4");
}

// Megatron's arguments.py: --moe-pad-expert-input-to-capacity requires --moe-expert-capacity-factor.
void check_pad_to_capacity(const Scenario& s) {
  if (!s.moe.pad_to_capacity || s.moe.capacity_factor) return;
  throw InputError("/moe/pad_to_capacity", "true",
                   "pad_to_capacity pads each expert to its capacity and needs moe.capacity_factor (it is null: "
                   "dropless)",
                   "false, or set moe.capacity_factor");
}

// Megatron's checks for --overlap-moe-expert-parallel-comm (arguments.py / transformer_config.py;
// Megatron-Bridge skill "perf-moe-comm-overlap", prerequisites): an MoE model with EP > 1, the
// alltoall or flex dispatcher, no full recompute, and with PP > 1 the interleaved schedule.
void check_a2a_overlap(const Scenario& s) {
  if (!s.moe.a2a_overlap) return;
  const auto refuse = [](const std::string& rule, const std::string& allowed) {
    throw InputError("/moe/a2a_overlap", "true", rule, allowed);
  };
  if (!s.model.is_moe() || s.parallel.ep <= 1) {
    refuse("a2a_overlap hides the expert-parallel all-to-all and needs an MoE model with ep > 1 (ep is " +
               std::to_string(s.parallel.ep) + ")",
           "false, or ep > 1");
  }
  if (s.moe.dispatcher == Dispatcher::kAllgather) {
    refuse("a2a_overlap needs the alltoall, deepep or hybridep dispatcher (dispatcher is allgather)",
           "false, or dispatcher alltoall, deepep, hybridep");
  }
  if (s.recompute.granularity == RecomputeGranularity::kFull) {
    refuse("a2a_overlap cannot run with full recompute", "false, or recompute none or selective");
  }
  if (s.parallel.pp > 1 && s.parallel.vpp <= 1) {
    refuse("a2a_overlap with pipeline parallelism needs the interleaved schedule (pp is " +
               std::to_string(s.parallel.pp) + ", vpp 1)",
           "false, or pp 1, or vpp > 1");
  }
}

// An FP8 dispatch quantises the tokens DeepEP / HybridEP send; the NCCL dispatchers and 16-bit
// training have nothing to quantise them to.
void check_fp8_dispatch(const Scenario& s) {
  if (!s.moe.fp8_dispatch) return;
  if (!deduplicates(s.moe.dispatcher)) {
    throw InputError("/moe/fp8_dispatch", "true",
                     "fp8_dispatch needs the deepep or hybridep dispatcher (dispatcher is " +
                         std::string(to_string(s.moe.dispatcher)) + ")",
                     "false, or dispatcher deepep, hybridep");
  }
  if (!is_low_precision(s.precision)) {
    throw InputError("/moe/fp8_dispatch", "true",
                     "fp8_dispatch needs a low-precision recipe (precision is " + std::string(to_string(s.precision)) +
                         ")",
                     "false, or precision fp8, fp8-blockwise, mxfp8, nvfp4");
  }
}

// Megatron-Core's CUDA-graph scopes (megatron/core/transformer/enums.py CudaGraphScope): moe captures
// drop-and-pad MoE layers only and moe_preprocess requires moe_router; a graph replays fixed shapes,
// so a whole-layer graph of a dropless MoE layer (whose token counts change every step) cannot be
// captured either. full_iteration and layer each capture everything a narrower scope would.
void check_cuda_graph(const Scenario& s) {
  const RuntimeSpec& r = s.runtime;
  std::string written;
  for (const CudaGraphScope scope : r.cuda_graph) written += (written.empty() ? "[\"" : ", \"") + std::string(to_string(scope)) + "\"";
  written += "]";
  const auto refuse = [&written](const std::string& rule, const std::string& allowed) {
    throw InputError("/runtime/cuda_graph", written, rule, allowed);
  };
  for (const CudaGraphScope whole : {CudaGraphScope::kFullIteration, CudaGraphScope::kLayer}) {
    if (r.captures(whole) && r.cuda_graph.size() > 1) {
      refuse(std::string(to_string(whole)) + " captures every narrower scope: it stands alone",
             "[\"" + std::string(to_string(whole)) + "\"]");
    }
  }
  if (r.captures(CudaGraphScope::kMoePreprocess) && !r.captures(CudaGraphScope::kMoeRouter)) {
    refuse("moe_preprocess requires moe_router (Megatron-Core CudaGraphScope)", "add moe_router");
  }
  if (r.captures(CudaGraphScope::kMoe) &&
      (r.captures(CudaGraphScope::kMoeRouter) || r.captures(CudaGraphScope::kMoePreprocess))) {
    refuse("moe captures the whole MoE block, router and preprocessing included", "moe, or moe_router and moe_preprocess");
  }
  const bool static_moe = s.moe.pads_to_capacity();
  for (const CudaGraphScope scope : {CudaGraphScope::kMoe, CudaGraphScope::kLayer}) {
    if (r.captures(scope) && s.model.is_moe() && !static_moe) {
      refuse(std::string(to_string(scope)) +
                 " graphs of MoE layers need fixed shapes: drop-and-pad (moe.capacity_factor with pad_to_capacity); "
                 "this run is dropless",
             "moe_router, moe_preprocess, attn, full_iteration, or set moe.capacity_factor and pad_to_capacity");
    }
  }
}

void check_dispatcher_sms(const Scenario& s) {
  if (!s.moe.dispatcher_sms || s.system.gpu.sm_count <= 0 || *s.moe.dispatcher_sms < s.system.gpu.sm_count) return;
  throw InputError("/moe/dispatcher_sms", std::to_string(*s.moe.dispatcher_sms),
                   "the dispatch kernels cannot take every SM of the GPU (" + s.system.gpu.name + " has " +
                       std::to_string(s.system.gpu.sm_count) + ")",
                   "1 to " + std::to_string(s.system.gpu.sm_count - 1));
}

void check_precision(const Scenario& s) {
  if (s.system.gpu.supports(s.precision)) return;
  std::vector<std::string> ok;
  for (Precision p : kAllPrecisions) {
    if (s.system.gpu.supports(p)) ok.emplace_back(to_string(p));
  }
  throw InputError("/precision", "\"" + std::string(to_string(s.precision)) + "\"",
                   "GPU " + s.system.gpu.name + " does not support " + std::string(to_string(s.precision)), join(ok));
}

}  // namespace

bool fp8_dispatch_possible(const Scenario& s) { return deduplicates(s.moe.dispatcher) && is_low_precision(s.precision); }

bool a2a_overlap_possible(const Scenario& s) {
  return s.model.is_moe() && s.parallel.ep > 1 && s.moe.dispatcher != Dispatcher::kAllgather &&
         s.recompute.granularity != RecomputeGranularity::kFull && (s.parallel.pp == 1 || s.parallel.vpp > 1);
}

void validate_layout(const Scenario& s) {
  check_positive_sizes(s);
  check_precision(s);
  check_fp8_param_gather(s);
  check_fp4_param_gather(s);
  check_store_param_remainders(s);
  check_offload(s);
  check_tensor_parallel(s);
  check_sequence_parallel(s);
  check_pipeline(s);
  check_context_parallel(s);
  check_gpu_count(s);
  check_experts(s);
  check_placement(s);
  check_pad_to_capacity(s);
  check_a2a_overlap(s);
  check_fp8_dispatch(s);
  check_cuda_graph(s);
  check_dispatcher_sms(s);
  check_batch(s);
  check_interleaved_microbatches(s);  // after check_batch: the micro-batch count is whole
}

}  // namespace moesim
