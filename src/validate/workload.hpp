#pragma once
// The proxy reduced to what its runner (`moesim-validate-run`, calibrate/proxy/) executes: shapes,
// token counts and, for MoE layers, the routed copies of every (layer, micro-batch) drawn exactly as
// the simulation draws them, so that the run measures the loads the prediction priced
// (record/validation_workload.hpp; docs/validation.md).
#include <cstdint>
#include <vector>

#include "record/validation_workload.hpp"
#include "validate/proxy.hpp"

namespace moesim::validate {

/// Timed steps and warm-up steps a run may ask for.
inline constexpr std::int64_t kMaxSteps = 10000, kMaxWarmup = 1000;

/// Throws InputError naming --steps or --warmup when either is out of its range.
void check_run_length(std::int64_t steps, std::int64_t warmup);

/// The proxy's workload for `steps` timed steps after `warmup` untimed ones. Throws InputError when
/// the runner cannot run the proxy, naming the scenario path (`/parallel/tp`: it runs TP 1 only;
/// `/model/multi_latent_attention`, `/model/sliding_window`, `/model/causal`, `/model/add_bias_linear`,
/// `/precision` fp16 and fp8-blockwise, `/moe/capacity_factor`: it runs dropless) or the option
/// (`--steps`, `--warmup`).
[[nodiscard]] ValidationWorkload make_workload(const ProxyPlan& plan, std::int64_t steps, std::int64_t warmup);

/// Whole copies per expert from drawn (fractional) ones: largest remainder, so that they sum to
/// `total` with none above `cap` (needs experts × cap >= total). A draw that sums to `total` moves
/// no expert by a whole copy or more.
[[nodiscard]] std::vector<std::int64_t> round_copies(const std::vector<double>& drawn, std::int64_t total,
                                                     std::int64_t cap);

/// The copies of each expert split among `sources` EP ranks, [source][expert]: with every expert's
/// count at most sources × `tokens` and their sum sources × `tokens` × topk, each source row sums to
/// `tokens` × topk and no entry exceeds `tokens` (proof at the definition).
[[nodiscard]] std::vector<std::vector<std::int64_t>> split_among_sources(const std::vector<std::int64_t>& copies,
                                                                         std::int64_t sources);

}  // namespace moesim::validate
