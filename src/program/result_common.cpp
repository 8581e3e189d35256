#include "program/result_common.hpp"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/version.hpp"
#include "program/layer_cost.hpp"
#include "program/profile_warnings.hpp"
#include "schedule/step_shape.hpp"
#include "memory/memory_result.hpp"
#include "model/counts.hpp"

namespace moesim::program {

Result start_result(const Scenario& s, Fidelity fidelity) {
  Result r;
  r.scenario = s;
  r.fidelity = fidelity;
  r.seed = s.seed;
  r.moesim_version = std::string(kVersion);
  r.flops_convention = s.flops_convention;
  r.params = model::count_params(s.model);
  return r;
}

void finish_result(Result& r, const std::vector<schedule::StageLayers>& stages, const MemoryInputs& memory,
                   const LayerCostModel* costs) {
  const Scenario& s = r.scenario;
  const auto& p = s.parallel;
  const double tokens = static_cast<double>(s.training.global_batch_size * s.training.seq_length);
  const double gpus = static_cast<double>(s.system.gpus);
  r.tokens_per_s = tokens / r.step_time_s;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  r.model_flops_per_step =
      model::model_flops_per_step(s.model, s.training.seq_length, s.training.global_batch_size, s.flops_convention);
  r.model_tflops_per_gpu = r.model_flops_per_step / r.step_time_s / gpus / 1e12;
  const double peak = s.system.gpu.peak(s.precision).value_or(FlopsPerSecond(0)).value();
  r.mfu = peak > 0 ? r.model_flops_per_step / r.step_time_s / gpus / peak : 0.0;

  r.layout.dp = p.dp;
  r.layout.edp = p.edp(s.system.gpus);
  r.layout.num_microbatches = s.num_microbatches();
  r.layout.num_nodes = (s.system.gpus + s.system.gpus_per_node - 1) / s.system.gpus_per_node;
  for (const auto& st : stages) r.layout.layers_per_stage.push_back(static_cast<std::int64_t>(st.layers.size()));

  if ((s.model.num_layers + p.pipeline_split_slots()) % (p.pp * p.vpp) != 0) {
    r.warnings.push_back(fmt::format("{} layers do not split evenly over pp·vpp = {} chunks; layers per stage: {}",
                                     s.model.num_layers, p.pp * p.vpp, fmt::join(r.layout.layers_per_stage, ", ")));
  }
  // Assumptions the loader made (e.g. a topology file no preset matches).
  r.warnings.insert(r.warnings.end(), s.load_warnings.begin(), s.load_warnings.end());
  // The closed form prices each MoE layer on its expected most loaded EP rank; the simulation draws
  // every (layer, micro-batch) and runs each EP rank with its own load.
  const bool estimate = r.fidelity == Fidelity::kEstimate;
  if (estimate && schedule::routing_skewed(s) && !s.moe.pads_to_capacity()) {
    r.warnings.push_back(fmt::format(
        "routing distribution '{}': fidelity estimate prices each MoE layer on its expected most loaded EP rank "
        "(docs/routing.md); fidelity simulation draws every (layer, micro-batch)",
        to_string(s.moe.routing.distribution)));
  }
  const PlacementSpec& pl = s.moe.placement;
  if (s.model.is_moe() && pl.eplb() && p.ep > 1) {
    r.warnings.push_back(fmt::format(
        "experts placed EPLB-style: {} redundant experts ({} per EP rank), placed from the loads of the {} step(s) "
        "before ({}) and judged on this step's draws; the replicas' weights, gradients and optimizer state are "
        "in memory, and their gradients are reduced with the experts' (docs/routing.md)",
        pl.redundant_experts, pl.redundant_experts / p.ep, pl.rebalance_interval_steps,
        pl.profile ? fmt::format("profile '{}'", to_string(pl.profile->distribution)) : std::string("moe.routing")));
  }
  // Drops happen where a drawn load exceeds the capacity; balanced routing never does in either fidelity.
  if (s.model.is_moe() && !schedule::routing_skewed(s) && s.moe.capacity_factor && *s.moe.capacity_factor < 1.0) {
    r.warnings.push_back(fmt::format(
        "capacity_factor {} < 1 would drop tokens, but under balanced routing every expert is priced at its "
        "balanced share; set a skewed moe.routing to price the drops",
        *s.moe.capacity_factor));
  }
  if (s.calibration && costs && memory.compute) {
    const auto lines = profile_warnings(*s.calibration, costs->kernels(), costs->collectives());
    r.warnings.insert(r.warnings.end(), lines.begin(), lines.end());
  } else if (s.calibration) {
    // The planner's search (memory.compute false) reads only the step time: the per-kind account is
    // formatted for the results people read, not for each of ~10^5 candidates.
    r.warnings.push_back("calibration profile " + s.calibration->name + ": kernel and collective times interpolated "
                         "in it where it has rows (per-kind account left out)");
  } else {
    r.warnings.push_back(
        "kernel times from datasheet roofline with shape-dependent GEMM efficiency (no calibration profile)");
  }
  if (memory.compute) {
    r.memory = memory::memory_result(s, stages, memory.expert_load_factor, r.warnings);
  }
}

}  // namespace moesim::program
