#pragma once
// The plan request's field tables (the `request` object of moesim.plan/1, docs/planner.md): every
// field's key, member, range, meaning and `moesim plan` flag, declared once here, as the scenario's
// are in scenario_fields.hpp. config/plan_loader reads a request by visiting them, report/plan_json
// echoes one, report/field_reference documents them, and cli/cmd_plan takes the knob flags' names
// and help from them (cli/field_option.hpp).
//
// Besides the scenario tables' visitor calls (section, integer, number, boolean, enumeration,
// special), a visitor provides:
//   integer_list(info, member, range)         a non-empty array of integers, each in range
//   enumeration_list(info, member, table)     a non-empty array of names from an enum's table
//   special(info, Scenario)                   the base scenario (its own reader and echo)
//   special(info, std::vector<RecomputeSpec>) the recompute options searched
// In a request read from a file every space list is required: a written plan echoes the space it
// searched, filled in by planner::complete_space, so reading it back searches the same space.
#include <type_traits>

#include "core/value_range.hpp"
#include "scenario/field.hpp"
#include "scenario/plan_request.hpp"
#include "scenario/scenario_fields.hpp"

namespace moesim::plan_request_fields {

inline constexpr IntRange kTop{1, 100'000};
inline constexpr IntRange kFinalists{0, 100'000};
/// Tokens to train; 10^18 is ~10^4 × the largest published pre-training runs (~1.5·10^13 tokens).
inline constexpr NumberRange kTokenBudget{0.0, 1e18, false};
/// GiB kept free per GPU; 1024 GiB is above every GPU's memory, so any larger value rejects everything.
inline constexpr NumberRange kMemoryHeadroomGib{0.0, 1024.0, false};
/// Per EP rank: a rank holds each expert at most once, and no model has 2^16 experts.
inline constexpr IntRange kRedundantPerRank{0, 65'536};

template <typename S>
concept SpaceRef = std::is_same_v<std::remove_const_t<S>, SearchSpace>;
template <typename R>
concept RequestRef = std::is_same_v<std::remove_const_t<R>, PlanRequest>;

/// The searched knobs. Each takes its scenario field's range; `derived_default` says the planner's
/// default range (planner::complete_space), used where a list is not given.
template <typename V, SpaceRef S>
void visit_space(V& v, S& s) {
  using scenario_fields::kGpus;
  using scenario_fields::kMicroBatch;
  using scenario_fields::kParallelSize;
  v.integer_list(FieldInfo{.key = "gpus",
                           .doc = "cluster sizes; several give a Pareto front over GPUs (on the command line N, "
                                  "N1,N2 or FROM:TO doubling)",
                           .cli_flag = "--gpus",
                           .derived_default = "the scenario's system.gpus"},
                 s.gpus, kGpus);
  v.integer_list(FieldInfo{.key = "tp",
                           .doc = "tensor-parallel sizes",
                           .cli_flag = "--tp",
                           .derived_default = "1, 2, 4, 8, 16 up to the NVLink domain"},
                 s.tp, kParallelSize);
  v.integer_list(FieldInfo{.key = "cp", .doc = "context-parallel sizes", .cli_flag = "--cp", .derived_default = "1, 2, 4, 8"},
                 s.cp, kParallelSize);
  v.integer_list(FieldInfo{.key = "pp",
                           .doc = "pipeline-parallel sizes",
                           .cli_flag = "--pp",
                           .derived_default = "powers of two and divisors of the layers up to 32"},
                 s.pp, kParallelSize);
  v.integer_list(FieldInfo{.key = "vpp",
                           .doc = "virtual stages per pipeline rank",
                           .cli_flag = "--vpp",
                           .derived_default = "1 to 8"},
                 s.vpp, kParallelSize);
  v.integer_list(FieldInfo{.key = "ep",
                           .doc = "expert-parallel sizes",
                           .cli_flag = "--ep",
                           .derived_default = "every divisor of the expert count"},
                 s.ep, kParallelSize);
  v.integer_list(FieldInfo{.key = "etp",
                           .doc = "expert tensor-parallel sizes",
                           .cli_flag = "--etp",
                           .derived_default = "1 and each tp"},
                 s.etp, kParallelSize);
  v.integer_list(FieldInfo{.key = "micro_batch_size",
                           .doc = "micro-batch sizes (sequences)",
                           .cli_flag = "--micro-batch",
                           .derived_default = "1, 2, 4"},
                 s.micro_batch_size, kMicroBatch);
  v.special(FieldInfo{.key = "recompute",
                      .doc = "recompute options, each as the scenario's `recompute` field",
                      .cli_flag = "--recompute",
                      .derived_default = "none, selective, the MoE modules, full"},
            s.recompute);
  v.enumeration_list(FieldInfo{.key = "precision",
                               .doc = "GEMM precisions",
                               .cli_flag = "--precision",
                               .derived_default = "the scenario's, else bf16"},
                     s.precision, kPrecisionNames);
  v.enumeration_list(FieldInfo{.key = "dispatcher",
                               .doc = "MoE token dispatchers (only the first is used where ep = 1)",
                               .cli_flag = "--dispatcher",
                               .derived_default = "the scenario's and deepep"},
                     s.dispatcher, kDispatcherNames);
  v.integer_list(FieldInfo{.key = "redundant_experts_per_rank",
                           .doc = "EPLB redundant expert slots per EP rank, with the scenario's moe.placement.strategy "
                                  "eplb (a contiguous scenario: 0 only)",
                           .cli_flag = "--redundant-experts",
                           .derived_default = "0, 1, 2 under eplb; 0 under contiguous"},
                 s.redundant_experts_per_rank, kRedundantPerRank);
}

/// The whole request, keys in reading order.
template <typename V, RequestRef R>
void visit_plan_request(V& v, R& r) {
  v.special(FieldInfo{.key = "scenario",
                      .doc = "the base scenario: model, system, training, moe, optimizer and seed of every "
                             "candidate (its layout, micro-batch, recompute and precision come from the space)",
                      .required = true},
            r.base);
  v.section(FieldInfo{.key = "space", .doc = "the values each knob may take", .required = true},
            [&](auto& inner) { visit_space(inner, r.space); });
  v.enumeration(FieldInfo{.key = "objective",
                          .doc = "what best means: throughput of one cluster, or over several GPU counts tokens per "
                                 "GPU-hour or time to token_budget",
                          .cli_flag = "--objective"},
                r.objective, kPlanObjectiveNames);
  v.number(FieldInfo{.key = "token_budget",
                     .doc = "tokens to train; the time to train them is reported when > 0",
                     .cli_flag = "--token-budget"},
           r.token_budget, kTokenBudget);
  v.integer(FieldInfo{.key = "top", .doc = "rows of the ranked table", .cli_flag = "--top"}, r.top, kTop);
  v.integer(FieldInfo{.key = "finalists",
                      .doc = "best candidates by estimate simulated op by op and re-ranked (K)",
                      .cli_flag = "--finalists"},
            r.finalists, kFinalists);
  v.number(FieldInfo{.key = "memory_headroom_gib",
                     .doc = "GiB each GPU keeps free beyond the predicted peak for a layout to count as fitting "
                            "(the memory model misses published runs by up to a few GiB; 0 accepts a layout at "
                            "capacity)",
                     .cli_flag = "--memory-headroom"},
           r.memory_headroom_gib, kMemoryHeadroomGib);
  v.boolean(FieldInfo{.key = "skew_sensitivity",
                      .doc = "re-simulate the top 3 at log-normal sigma 0.5 and 1.0 (MoE models; --no-skew turns it off)"},
            r.skew_sensitivity);
}

}  // namespace moesim::plan_request_fields
