#include "planner/search_space.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace moesim::planner {
namespace {

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

void sort_unique(std::vector<std::int64_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::vector<std::int64_t> powers_of_two_up_to(std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

std::vector<std::int64_t> divisors_up_to(std::int64_t n, std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// Megatron's pipeline split: an even split, an even split once the embedding and the loss count as
// layers, or (as NVIDIA's DeepSeek-V3 recipes do with a custom layout) an uneven split into a power
// of two of chunks. Returns false for the other chunk counts.
bool pipeline_split_possible(std::int64_t layers, std::int64_t pp, std::int64_t vpp) {
  const std::int64_t chunks = pp * vpp;
  if (chunks > layers + 2) return false;
  if (layers % chunks == 0 || (layers + 2) % chunks == 0) return true;
  return is_power_of_two(vpp) && chunks <= layers;
}

std::vector<RecomputeSpec> default_recompute(const model::ModelSpec& m) {
  std::vector<RecomputeSpec> out;
  out.push_back({RecomputeGranularity::kNone, {}});
  out.push_back({RecomputeGranularity::kSelective, {RecomputeModule::kCoreAttn}});
  if (m.is_moe()) {
    // Megatron-Core MoE recipes' memory-saving modules: the expert activation function, the norms
    // and (MLA models) the latent up-projections are cheap to replay and large to keep.
    std::vector<RecomputeModule> modules{RecomputeModule::kMoeAct, RecomputeModule::kLayernorm};
    if (m.multi_latent_attention) modules.push_back(RecomputeModule::kMlaUpProj);
    out.push_back({RecomputeGranularity::kSelective, modules});
  }
  out.push_back({RecomputeGranularity::kFull, {}});
  return out;
}

}  // namespace

void complete_space(PlanRequest& request) {
  SearchSpace& sp = request.space;
  const Scenario& b = request.base;
  const auto& m = b.model;
  if (sp.gpus.empty()) sp.gpus.push_back(b.system.gpus);
  sort_unique(sp.gpus);
  const std::int64_t max_gpus = sp.gpus.back();
  // TP beyond 16 has no recipe; beyond the NVLink domain it is pruned (and reported) as topology.
  if (sp.tp.empty()) sp.tp = powers_of_two_up_to(std::min<std::int64_t>(16, max_gpus));
  if (sp.cp.empty()) sp.cp = powers_of_two_up_to(std::min<std::int64_t>(8, max_gpus));
  if (sp.pp.empty()) {
    sp.pp = powers_of_two_up_to(std::min<std::int64_t>({32, m.num_layers, max_gpus}));
    for (auto d : divisors_up_to(m.num_layers, std::min<std::int64_t>(32, max_gpus))) sp.pp.push_back(d);
  }
  if (sp.vpp.empty()) sp.vpp = {1, 2, 3, 4, 5, 6, 7, 8};
  if (sp.ep.empty()) sp.ep = m.is_moe() ? divisors_up_to(m.num_moe_experts, max_gpus) : std::vector<std::int64_t>{1};
  if (sp.etp.empty()) sp.etp = m.is_moe() ? sp.tp : std::vector<std::int64_t>{1};
  if (sp.micro_batch_size.empty()) sp.micro_batch_size = {1, 2, 4};
  if (sp.recompute.empty()) sp.recompute = default_recompute(m);
  if (sp.precision.empty()) sp.precision.push_back(b.precision);
  if (sp.dispatcher.empty()) {
    // Megatron's all-to-all and DeepEP (one network row per destination domain; moe/dispatch_traffic).
    // HybridEP moves DeepEP's traffic: only where the GPU preset publishes both kernels' rates
    // (hw/ep_kernel_rates.hpp: inside the domain on Blackwell, over RDMA on Hopper) do their prices
    // differ, and only there are both searched.
    sp.dispatcher.push_back(b.moe.dispatcher);
    if (m.is_moe() && !deduplicates(b.moe.dispatcher)) {
      sp.dispatcher.push_back(Dispatcher::kDeepep);
    }
    if (m.is_moe() && b.system.gpu.publishes_both_ep_kernels()) {
      sp.dispatcher.push_back(Dispatcher::kDeepep);
      sp.dispatcher.push_back(Dispatcher::kHybridep);
    }
  }
  const bool eplb = m.is_moe() && b.moe.placement.eplb();
  if (sp.redundant_experts_per_rank.empty()) {
    sp.redundant_experts_per_rank = eplb ? std::vector<std::int64_t>{0, 1, 2} : std::vector<std::int64_t>{0};
  }
  if (!eplb && sp.redundant_experts_per_rank != std::vector<std::int64_t>{0}) {
    throw InputError("/space/redundant_experts_per_rank", fmt::format("[{}]", fmt::join(sp.redundant_experts_per_rank, ", ")),
                     "redundant experts need the scenario's moe.placement.strategy \"eplb\" (it places contiguously)",
                     "[0], or set moe.placement.strategy to \"eplb\"");
  }
  for (auto* v : {&sp.tp, &sp.cp, &sp.pp, &sp.vpp, &sp.ep, &sp.etp, &sp.micro_batch_size, &sp.redundant_experts_per_rank}) {
    sort_unique(*v);
  }
  std::sort(sp.precision.begin(), sp.precision.end());
  sp.precision.erase(std::unique(sp.precision.begin(), sp.precision.end()), sp.precision.end());
  std::sort(sp.dispatcher.begin(), sp.dispatcher.end());
  sp.dispatcher.erase(std::unique(sp.dispatcher.begin(), sp.dispatcher.end()), sp.dispatcher.end());
}

std::vector<Candidate> enumerate_candidates(const PlanRequest& request) {
  const SearchSpace& sp = request.space;
  const std::int64_t layers = request.base.model.num_layers;
  const std::int64_t experts = request.base.model.num_moe_experts;
  std::vector<Candidate> out;
  Candidate c;
  for (auto gpus : sp.gpus) {
    for (auto precision : sp.precision) {
      for (auto pp : sp.pp) {
        for (auto vpp : sp.vpp) {
          if (vpp > 1 && pp == 1) continue;
          if (!pipeline_split_possible(layers, pp, vpp)) continue;
          for (auto tp : sp.tp) {
            for (auto cp : sp.cp) {
              for (auto ep : sp.ep) {
                for (std::size_t d = 0; d < sp.dispatcher.size(); ++d) {
                  // Without expert parallelism there is nothing to dispatch: one dispatcher is enough.
                  if (ep == 1 && d > 0) continue;
                  for (std::size_t x = 0; x < sp.redundant_experts_per_rank.size(); ++x) {
                    // Without expert parallelism there is nowhere to put a replica; a rank holds each
                    // expert at most once.
                    const std::int64_t redundant = sp.redundant_experts_per_rank[x];
                    if (ep == 1 && x > 0) continue;
                    if (ep > 1 && redundant > experts - experts / ep) continue;
                    for (auto etp : sp.etp) {
                      if (etp != 1 && etp != tp) continue;
                      for (auto mbs : sp.micro_batch_size) {
                        for (std::size_t r = 0; r < sp.recompute.size(); ++r) {
                          c.index = static_cast<std::int64_t>(out.size());
                          c.gpus = gpus;
                          c.precision = precision;
                          c.pp = pp;
                          c.vpp = vpp;
                          c.tp = tp;
                          c.cp = cp;
                          c.ep = ep;
                          c.etp = etp;
                          c.micro_batch_size = mbs;
                          c.recompute = static_cast<std::int64_t>(r);
                          c.dispatcher = sp.dispatcher[d];
                          c.redundant_per_rank = ep > 1 ? redundant : 0;
                          out.push_back(c);
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

Scenario scenario_for(const PlanRequest& request, const Candidate& c) {
  Scenario s = request.base;
  s.system.gpus = c.gpus;
  s.precision = c.precision;
  s.training.micro_batch_size = c.micro_batch_size;
  s.recompute = request.space.recompute.at(static_cast<std::size_t>(c.recompute));
  s.moe.dispatcher = c.dispatcher;
  // EPLB needs expert parallelism; its slots scale with the candidate's EP group.
  if (s.moe.placement.eplb() && c.ep > 1) {
    s.moe.placement.redundant_experts = c.redundant_per_rank * c.ep;
  } else {
    s.moe.placement = PlacementSpec{};
  }
  ParallelSpec& p = s.parallel;
  const bool overlap = p.tp_comm_overlap;
  p = ParallelSpec{};
  p.tp = c.tp;
  p.cp = c.cp;
  p.pp = c.pp;
  p.vpp = c.vpp;
  p.ep = c.ep;
  p.etp = c.etp;
  // A grid larger than the cluster keeps dp at 1, so validate_layout names the real rule (gpus must
  // be divisible by tp·cp·pp) rather than "dp must be at least 1".
  p.dp = std::max<std::int64_t>(1, (c.tp * c.cp * c.pp) > 0 ? c.gpus / (c.tp * c.cp * c.pp) : 1);
  p.sequence_parallel = c.tp > 1;
  p.tp_comm_overlap = overlap && c.tp > 1;
  const std::int64_t layers = s.model.num_layers, chunks = c.pp * c.vpp;
  if (chunks > 1 && layers % chunks != 0 && (layers + 2) % chunks == 0) {
    p.account_for_embedding_in_pipeline_split = true;
    p.account_for_loss_in_pipeline_split = true;
  }
  // As tp_comm_overlap: a requested combined 1F1B applies to the candidates that can run it.
  s.moe.a2a_overlap = request.base.moe.a2a_overlap && a2a_overlap_possible(s);
  // A stack that quantises its dispatch does so where there is something to quantise.
  s.moe.fp8_dispatch = request.base.moe.fp8_dispatch && fp8_dispatch_possible(s);
  if (c.offload) s.offload.activations = rescue_offload_modules(s.model.is_moe());
  return s;
}

std::string describe(const PlanRequest& request, const Candidate& c) {
  std::string out = fmt::format("TP{}", c.tp);
  if (c.cp > 1) out += fmt::format(" CP{}", c.cp);
  out += fmt::format(" PP{}", c.pp);
  if (c.vpp > 1) out += fmt::format(" VPP{}", c.vpp);
  if (request.base.model.is_moe()) {
    out += fmt::format(" EP{}", c.ep);
    if (c.etp > 1) out += fmt::format(" ETP{}", c.etp);
  }
  const bool dispatcher_varies = request.space.dispatcher.size() > 1 || c.dispatcher != Dispatcher::kAlltoall;
  const std::int64_t mp = c.tp * c.cp * c.pp;
  if (mp > 0 && c.gpus % mp == 0) out += fmt::format(" DP{}", c.gpus / mp);
  out += fmt::format(" · mbs {} · {} · {}", c.micro_batch_size,
                     recompute_label(request.space.recompute.at(static_cast<std::size_t>(c.recompute))),
                     to_string(c.precision));
  if (request.base.model.is_moe() && c.ep > 1 && dispatcher_varies) out += fmt::format(" · {}", to_string(c.dispatcher));
  if (request.base.moe.placement.eplb() && c.ep > 1) out += fmt::format(" · EPLB +{}/rank", c.redundant_per_rank);
  if (request.space.gpus.size() > 1) out += fmt::format(" · {} GPUs", c.gpus);
  if (c.offload) out += " · offload " + offload_modules_text(rescue_offload_modules(request.base.model.is_moe()), "+");
  return out;
}

}  // namespace moesim::planner
