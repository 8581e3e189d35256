#include "validate/proxy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "memory/memory_result.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::validate {
namespace {

/// The largest d <= cap that divides every value in `must_divide` (1 always does).
std::int64_t largest_divisor(std::int64_t cap, const std::vector<std::int64_t>& must_divide) {
  for (std::int64_t d = std::max<std::int64_t>(cap, 1); d > 1; --d) {
    if (std::all_of(must_divide.begin(), must_divide.end(), [d](std::int64_t v) { return v > 0 && v % d == 0; })) {
      return d;
    }
  }
  return 1;
}

/// The scenario with a stack of `layers` layers: every layer the model's MoE layer when it has one.
Scenario with_layers(const Scenario& base, std::int64_t layers) {
  Scenario p = base;
  p.model.num_layers = layers;
  if (p.model.is_moe()) p.model.moe_layer_pattern.assign(static_cast<std::size_t>(layers), true);
  return p;
}

double gib(const Scenario& s) { return s.system.gpu.hbm_capacity.value() / (1024.0 * 1024.0 * 1024.0); }

bool fits(const Scenario& p) {
  std::vector<std::string> warnings;
  const auto stages = schedule::plan_stages(p);
  return memory::memory_result(p, stages, 1.0, warnings).fits;
}

}  // namespace

ProxyPlan plan_proxy(const Scenario& s, const ProxyOptions& o) {
  const std::int64_t per_node = std::max<std::int64_t>(s.system.gpus_per_node, 1);
  if (o.gpus < 1 || o.gpus > per_node) {
    throw InputError("--gpus", std::to_string(o.gpus), "the proxy runs on the GPUs of one machine",
                     fmt::format("1 to {} (GPUs per node of {})", per_node, s.system.name));
  }
  if (o.microbatches < 1 || o.microbatches > 64) {
    throw InputError("--microbatches", std::to_string(o.microbatches), "micro-batches per proxy step", "1 to 64");
  }
  if (s.moe.routing.distribution == RoutingDistribution::kHistogram) {
    throw InputError("/moe/routing/distribution", "histogram",
                     "the proxy cannot yet map a measured histogram's layers onto its shorter stack",
                     "balanced, uniform, zipf, lognormal or dirichlet");
  }
  ProxyPlan plan;
  Scenario p = s;
  p.name = s.name + " (validation proxy)";
  p.system.gpus = o.gpus;
  auto note = [&](std::string line) { plan.notes.push_back(std::move(line)); };
  note(fmt::format("{} GPU(s) of one {} machine ({} GPUs in the scenario)", o.gpus, s.system.gpu.name, s.system.gpus));

  // One pipeline stage, no context parallelism; TP and EP cut to what the GPUs allow.
  auto& par = p.parallel;
  const std::int64_t tp =
      largest_divisor(std::min(s.parallel.tp, o.gpus), {o.gpus, s.model.num_attention_heads, s.model.num_query_groups});
  const std::int64_t ep =
      s.model.is_moe() ? largest_divisor(std::min(s.parallel.ep, o.gpus), {o.gpus, s.model.num_moe_experts}) : 1;
  par.tp = tp;
  par.pp = 1;
  par.vpp = 1;
  par.cp = 1;
  par.ep = ep;
  par.etp = 1;
  par.dp = o.gpus / tp;
  par.sequence_parallel = s.parallel.sequence_parallel && tp > 1;
  par.tp_comm_overlap = false;
  par.account_for_embedding_in_pipeline_split = false;
  par.account_for_loss_in_pipeline_split = false;
  note(fmt::format("layout TP{} EP{} DP{} (scenario TP{} PP{} VPP{} CP{} EP{} ETP{}): one stage, no context "
                   "parallelism",
                   tp, ep, par.dp, s.parallel.tp, s.parallel.pp, s.parallel.vpp, s.parallel.cp, s.parallel.ep,
                   s.parallel.etp));

  if (p.model.is_moe() && s.moe.dispatcher != Dispatcher::kAlltoall) {
    note("dispatch and combine through NCCL all-to-all (the scenario's dispatcher is not run)");
  }
  p.moe.dispatcher = Dispatcher::kAlltoall;
  p.moe.a2a_overlap = false;
  p.moe.dispatcher_sms.reset();
  if (s.moe.host_sync_idle_s > 0) {
    note("no host_sync idle: the runner issues its kernels from C++ without reading the token counts back");
  }
  p.moe.host_sync_idle_s = 0;
  if (s.host_op_seconds() > 0) {
    note("host not priced: the runner launches its kernels from a C++ loop, without Megatron's Python per op "
         "or a token-count read-back");
  }
  p.host_costs = {};
  if (s.moe.routing.device_limited_nodes > 0) note("no device-limited routing (one NVLink domain)");
  p.moe.routing.device_limited_nodes = 0;

  p.optimizer.distributed = false;
  p.optimizer.overlap_grad_reduce = false;
  p.optimizer.overlap_param_gather = false;
  p.optimizer.fp8_param_gather = false;
  p.optimizer.fp4_param_gather = false;
  note("gradients all-reduced over DP after the backward, then an Adam-like update (nothing overlapped)");

  p.training.global_batch_size = s.training.micro_batch_size * par.dp * o.microbatches;
  note(fmt::format("{} micro-batch(es) of {} × {} tokens per step", o.microbatches, s.training.micro_batch_size,
                   s.training.seq_length));

  if (o.experts) {
    const std::int64_t n = *o.experts;
    if (!s.model.is_moe()) {
      throw InputError("--experts", std::to_string(n), "the model is dense: it has no routed experts to cut",
                       "leave --experts out");
    }
    const std::int64_t topk = s.model.moe_router_topk;
    const std::int64_t all = s.model.num_moe_experts;
    if (n < topk || n > all || n % ep != 0) {
      throw InputError("--experts", std::to_string(n),
                       fmt::format("routed experts of the proxy: at least top-k ({}), at most the model's ({}), "
                                   "a multiple of the proxy's EP ({})",
                                   topk, all, ep),
                       fmt::format("multiples of {} from {} to {}", ep, (topk + ep - 1) / ep * ep, all / ep * ep));
    }
    if (n != all) {
      p.model.num_moe_experts = n;
      note(fmt::format("{} of the model's {} routed experts, each of its shape, top-{}, {} routing over them "
                       "(--experts)",
                       n, all, topk, to_string(s.moe.routing.distribution)));
    }
  }

  p.model.vocab_size = kProxyVocab;
  p.model.mtp_num_layers = 0;
  const std::string kind = p.model.is_moe() ? "MoE" : "dense";
  if (o.layers) {
    if (*o.layers < 1 || *o.layers > s.model.num_layers) {
      throw InputError("--layers", std::to_string(*o.layers), "layers in the proxy's stack",
                       fmt::format("1 to {} (the model's layers)", s.model.num_layers));
    }
    p = with_layers(p, *o.layers);
    if (!fits(p)) {
      throw InputError("--layers", std::to_string(*o.layers),
                       fmt::format("the proxy's stack does not fit in {:.0f} GiB per GPU", gib(s)),
                       p.model.is_moe() ? "fewer layers, more GPUs, or fewer experts (--experts)"
                                        : "fewer layers, or more GPUs");
    }
  } else {
    std::int64_t layers = std::min(s.model.num_layers, kMaxProxyLayers);
    while (layers > 1 && !fits(with_layers(p, layers))) --layers;
    p = with_layers(p, layers);
    if (!fits(p)) {
      throw InputError("--gpus", std::to_string(o.gpus),
                       fmt::format("not even one {} layer of {} fits in {:.0f} GiB per GPU", kind, s.model.name,
                                   gib(s)),
                       p.model.is_moe() ? "more GPUs (the proxy splits TP and EP over them), or fewer experts "
                                          "(--experts)"
                                        : "more GPUs (the proxy splits TP over them)");
    }
  }
  note(fmt::format("a stack of {} {} layer(s) of the model's {}, without embedding and LM head", p.model.num_layers,
                   kind, s.model.num_layers));
  validate_layout(p);
  plan.scenario = std::move(p);
  return plan;
}

}  // namespace moesim::validate
