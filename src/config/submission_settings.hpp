#pragma once
// What the configuration files behind a published run say that its published record leaves out, for
// the runs that are not Megatron-Bridge's (those: recipe_settings.hpp). Each setting is read from the
// files named in `source`, never fitted.
#include <cstdint>
#include <optional>
#include <string>

#include "scenario/scenario.hpp"

namespace moesim::config {

struct SubmissionSettings {
  std::optional<std::int64_t> vpp;          ///< where the record leaves the interleaving out
  std::optional<std::int64_t> micro_batch;  ///< where the record leaves the micro-batch out
  bool grad_reduce_in_fp32 = true;          ///< Megatron's and Apex's default; false: bf16 gradient sync
  bool store_param_remainders = false;      ///< Apex DistributedFusedAdam under NeMo 1.x bf16 O2
  bool fp8_param_gather = false;            ///< NeMo fp8_params: FP8 weights, fp32 master in the optimizer
  std::optional<RecomputeGranularity> recompute;  ///< the config's activation checkpointing
  std::string source;  ///< the files, with the commit; empty: nothing known beyond the record
};

/// The settings of published run `id` (a point's id), or an empty `source` when no configuration file
/// is known for it.
[[nodiscard]] SubmissionSettings submission_settings(const std::string& id);

/// Megatron-Core's TransformerConfig.hidden_dropout for a published model: 0.1 (Megatron's default,
/// NeMo's GPT-3 configs) for the GPT-3-shaped benchmark models, 0 for the Llama, Nemotron, Mixtral and
/// Qwen families, whose recipes train without dropout.
[[nodiscard]] double published_hidden_dropout(const std::string& model_name);

}  // namespace moesim::config
