#include "validate/workload.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "schedule/step_shape.hpp"
#include "moe/expert_loads.hpp"

namespace moesim::validate {
namespace {

/// What the runner cannot run is refused with the scenario path it comes from. plan_proxy already
/// removes what one machine cannot reproduce (pipeline, context parallelism, other dispatchers,
/// overlap); those checks stay here for a plan built by hand.
void check_runnable(const Scenario& s) {
  const auto& par = s.parallel;
  if (par.tp != 1) {
    throw InputError("/parallel/tp", std::to_string(par.tp), "the proxy runner runs TP 1 only",
                     "1 (--gpus 1, or a scenario with tp 1)");
  }
  for (const auto& [path, value] : {std::pair{"/parallel/pp", par.pp}, std::pair{"/parallel/vpp", par.vpp},
                                    std::pair{"/parallel/cp", par.cp}, std::pair{"/parallel/etp", par.etp}}) {
    if (value != 1) {
      throw InputError(path, std::to_string(value),
                       "the proxy runner runs one stage without context or expert-tensor parallelism", "1");
    }
  }
  const model::ModelSpec& m = s.model;
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    if (m.attention_span(l, s.training.seq_length) != s.training.seq_length) {
      throw InputError("/model/sliding_window", std::to_string(m.sliding_window),
                       "the proxy runner runs full attention only", "0");
    }
  }
  if (!m.causal) throw InputError("/model/causal", "false", "the proxy runner runs causal attention only", "true");
  if (m.add_bias_linear) {
    throw InputError("/model/add_bias_linear", "true", "the proxy runner's linear layers have no biases", "false");
  }
  if (m.mtp_num_layers != 0) {
    throw InputError("/model/mtp_num_layers", std::to_string(m.mtp_num_layers),
                     "the proxy runner runs no multi-token prediction", "0");
  }
  if (s.precision == Precision::kFp16 || s.precision == Precision::kFp8Blockwise) {
    throw InputError("/precision", std::string(to_string(s.precision)), "the proxy runner has no GEMMs in it",
                     "bf16, fp8, mxfp8, nvfp4");
  }
  if (!m.is_moe()) return;
  for (std::int64_t l = 0; l < m.num_layers; ++l) {
    if (!m.layer_is_moe(l)) {
      throw InputError("/model/moe_layer_pattern", fmt::format("layer {} dense", l),
                       "the proxy runner runs a stack of MoE layers only (plan_proxy makes every layer MoE)",
                       "every layer MoE");
    }
  }
  const MoeSpec& moe = s.moe;
  if (moe.capacity_factor) {
    // Dropping would leave source rows short of tokens × top-k copies; the runner computes every
    // routed copy.
    throw InputError("/moe/capacity_factor", fmt::format("{}", *moe.capacity_factor),
                     "the proxy runner is dropless: every routed copy is computed", "null (dropless)");
  }
  if (moe.dispatcher != Dispatcher::kAlltoall) {
    throw InputError("/moe/dispatcher", std::string(to_string(moe.dispatcher)),
                     "the proxy runner dispatches through NCCL all-to-all",
                     std::string(to_string(Dispatcher::kAlltoall)));
  }
  if (moe.a2a_overlap) {
    throw InputError("/moe/a2a_overlap", "true", "the proxy runner overlaps nothing", "false");
  }
  if (moe.routing.distribution == RoutingDistribution::kHistogram) {
    throw InputError("/moe/routing/distribution", "histogram",
                     "the proxy cannot yet map a measured histogram's layers onto its shorter stack",
                     "balanced, uniform, zipf, lognormal or dirichlet");
  }
  if (moe.routing.device_limited_nodes != 0) {
    throw InputError("/moe/routing/device_limited_nodes", std::to_string(moe.routing.device_limited_nodes),
                     "the proxy runs on one NVLink domain: no device-limited routing", "0");
  }
  if (m.num_moe_experts % par.ep != 0) {
    throw InputError("/parallel/ep", std::to_string(par.ep), "ep must divide the routed experts",
                     std::to_string(m.num_moe_experts));
  }
}

/// The recomputed modules of a selective recompute, once each, by name: the workload is plain text for
/// the CUDA runner (which refuses those it cannot replay).
std::vector<std::string> recomputed_modules(const RecomputeSpec& r) {
  std::vector<std::string> out;
  if (r.granularity != RecomputeGranularity::kSelective) return out;
  for (RecomputeModule module : r.modules) {
    const std::string name(to_string(module));
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace

std::vector<std::int64_t> round_copies(const std::vector<double>& drawn, std::int64_t total, std::int64_t cap) {
  const std::size_t n = drawn.size();
  if (n == 0 || total < 0 || cap < 0 ||
      static_cast<double>(cap) * static_cast<double>(n) < static_cast<double>(total)) {
    throw InternalError(fmt::format("round_copies: {} copies cannot go to {} experts of at most {}", total, n, cap));
  }
  std::vector<std::int64_t> out(n);
  std::vector<double> rest(n);
  std::int64_t sum = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const double x = std::clamp(std::isfinite(drawn[e]) ? drawn[e] : 0.0, 0.0, static_cast<double>(cap));
    out[e] = static_cast<std::int64_t>(std::floor(x));
    rest[e] = x - static_cast<double>(out[e]);
    sum += out[e];
  }
  // Largest remainder first, ties to the lower expert index.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rest[a] > rest[b]; });
  // Short of `total`: a draw summing to `total` is short by the sum of its remainders, fewer than the
  // experts with one, so the first pass gives one copy to each of the largest remainders and no expert
  // moves by a whole copy. A draw that lost copies at the cap (the multinomial chain clips an expert at
  // `tokens`) takes further passes over the experts below the cap, each of which fills them evenly.
  while (sum < total) {
    const auto open = std::count_if(out.begin(), out.end(), [cap](std::int64_t c) { return c < cap; });
    if (open == 0) throw InternalError("round_copies: every expert at the cap below the total");
    const std::int64_t each = std::max<std::int64_t>(1, (total - sum) / open);
    for (const std::size_t e : order) {
      if (sum == total) break;
      const std::int64_t give = std::min({each, cap - out[e], total - sum});
      if (give <= 0) continue;
      out[e] += give;
      sum += give;
    }
  }
  // Above `total` (a fractional draw a rounding error above it): back from the smallest remainders.
  while (sum > total) {
    for (auto it = order.rbegin(); it != order.rend() && sum > total; ++it) {
      if (out[*it] > 0) {
        --out[*it];
        --sum;
      }
    }
  }
  return out;
}

std::vector<std::vector<std::int64_t>> split_among_sources(const std::vector<std::int64_t>& copies,
                                                           std::int64_t sources) {
  // Lay the copies out expert by expert — expert 0's c_0 copies at positions 0 .. c_0 − 1, expert 1's
  // next, and so on — and deal position i to source i mod S (S = sources).
  //  * Row sums: the positions are 0 .. S·R − 1 (the copies sum to S·R, R = tokens × top-k), which
  //    hold exactly R of each residue mod S, so every source receives exactly R copies.
  //  * Entries: expert e's copies are a run of c_e consecutive positions, which holds ⌊c_e / S⌋ or
  //    ⌈c_e / S⌉ of each residue; with c_e <= S·tokens, source s receives at most ⌈S·tokens / S⌉ =
  //    tokens copies of e — no more than its tokens, each of which picks an expert at most once.
  // (Such a row is a real routing: deal a source's R copies, expert by expert, round-robin over its
  // tokens; an expert's ≤ tokens consecutive copies land on distinct tokens, each token gets top-k.)
  const auto s = static_cast<std::size_t>(std::max<std::int64_t>(sources, 1));
  std::vector<std::vector<std::int64_t>> out(s, std::vector<std::int64_t>(copies.size(), 0));
  std::size_t position = 0;  // mod S
  for (std::size_t e = 0; e < copies.size(); ++e) {
    const auto c = static_cast<std::size_t>(std::max<std::int64_t>(copies[e], 0));
    const std::size_t each = c / s, extra = c % s;
    for (std::size_t j = 0; j < s; ++j) out[j][e] = static_cast<std::int64_t>(each);
    // The `extra` copies past the last whole round start at the run's first residue.
    for (std::size_t j = 0; j < extra; ++j) ++out[(position + j) % s][e];
    position = (position + c) % s;
  }
  return out;
}

void check_run_length(std::int64_t steps, std::int64_t warmup) {
  if (steps < 1 || steps > kMaxSteps) {
    throw InputError("--steps", std::to_string(steps), "timed steps of the proxy run",
                     fmt::format("1 to {}", kMaxSteps));
  }
  if (warmup < 0 || warmup > kMaxWarmup) {
    throw InputError("--warmup", std::to_string(warmup), "untimed warm-up steps before the timed ones",
                     fmt::format("0 to {}", kMaxWarmup));
  }
}

ValidationWorkload make_workload(const ProxyPlan& plan, std::int64_t steps, std::int64_t warmup) {
  check_run_length(steps, warmup);
  const Scenario& s = plan.scenario;
  check_runnable(s);
  const schedule::StepShape shape = schedule::step_shape(s);
  const model::ModelSpec& m = s.model;
  const ParallelSpec& par = s.parallel;
  ValidationWorkload w;
  w.scenario = s.name;
  w.gpu = s.system.gpu.name;
  w.precision = std::string(to_string(s.precision));
  w.recompute_modules = recomputed_modules(s.recompute);
  const bool replays_nothing =
      s.recompute.granularity == RecomputeGranularity::kSelective && w.recompute_modules.empty();
  w.recompute = std::string(to_string(replays_nothing ? RecomputeGranularity::kNone : s.recompute.granularity));
  w.attention = std::string(to_string(s.attention_backend));
  w.gpus = s.system.gpus;
  w.tp = par.tp;
  w.ep = par.ep;
  w.dp = par.dp;
  w.layers = m.num_layers;
  w.microbatches = s.num_microbatches();
  w.steps = steps;
  w.warmup = warmup;
  w.micro_batch_size = s.training.micro_batch_size;
  w.seq = s.training.seq_length;
  w.tokens_per_rank = shape.sp_tokens;  // what each EP rank routes per micro-batch and MoE layer
  w.hidden = m.hidden_size;
  w.heads = m.num_attention_heads;
  w.kv_heads = m.num_query_groups;
  w.head_dim = m.kv_channels;
  if (m.multi_latent_attention) {
    const model::MlaSpec& mla = *m.multi_latent_attention;
    w.kv_heads = m.num_attention_heads;
    w.head_dim = mla.qk_head_dim + mla.qk_pos_emb_head_dim;
    w.q_lora_rank = mla.q_lora_rank;
    w.kv_lora_rank = mla.kv_lora_rank;
    w.qk_rope_head_dim = mla.qk_pos_emb_head_dim;
    w.v_head_dim = mla.v_head_dim;
  }
  w.gated = m.gated_linear_unit;
  w.moe = m.is_moe();
  // The cost model prices a softmax top-k router (program/layer_cost: router_topk).
  w.router_scoring = "softmax";
  w.seed = s.seed;
  if (!w.moe) {
    w.ffn = m.ffn_hidden_size;
    return w;
  }
  w.experts = m.num_moe_experts;
  w.topk = m.moe_router_topk;
  w.expert_ffn = m.moe_ffn_hidden_size;
  w.shared_ffn = m.moe_shared_expert_intermediate_size;
  // The draws the simulation prices: its load model, the EP group's tokens, step 0.
  const moe::ExpertLoadModel loads = moe::expert_load_model(s, shape.groups.ep.per_domain);
  const std::int64_t tokens = w.tokens_per_rank * w.ep;
  w.routed_copies.resize(static_cast<std::size_t>(w.layers));
  for (std::int64_t l = 0; l < w.layers; ++l) {
    auto& layer = w.routed_copies[static_cast<std::size_t>(l)];
    for (std::int64_t mb = 0; mb < w.microbatches; ++mb) {
      const std::vector<double> drawn = loads.expert_tokens(tokens, l, mb);
      layer.push_back(split_among_sources(round_copies(drawn, tokens * w.topk, tokens), w.ep));
    }
  }
  return w;
}

}  // namespace moesim::validate
