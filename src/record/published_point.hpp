#pragma once
// One published end-to-end training measurement (tests/validation/published.json), turned into the
// scenario that reproduces it: a record, so it lives with the other records here, below both
// config/published_loader, which builds these, and accuracy/, which runs them (to_string is there).
#include <string>
#include <vector>

#include "core/named_enum.hpp"
#include "scenario/scenario.hpp"

namespace moesim::accuracy {

enum class Metric { kTokensPerSecondPerGpu, kStepTimeSeconds, kTflopsPerGpu, kMfu };
/// The "metric" spelling of tests/validation/published.json.
inline constexpr auto kMetricNames = std::to_array<EnumName<Metric>>(
    {{Metric::kTokensPerSecondPerGpu, "tokens_per_s_per_gpu"}, {Metric::kStepTimeSeconds, "step_time_s"},
     {Metric::kTflopsPerGpu, "tflops_per_gpu"}, {Metric::kMfu, "mfu"}});
[[nodiscard]] std::string_view to_string(Metric m);

/// How the publication counted FLOPs when it reported TFLOP/s or MFU.
enum class PublishedFlops {
  kNarayanan2021,  ///< 96·B·s·l·h²·(1 + s/6h + V/16lh): recomputed forward included (Narayanan 2021 eq. 3)
  kMegatronFullS2, ///< Megatron model FLOPs with s² counted in full (Megatron before 2025, NeMo)
  kMegatronCausal, ///< current Megatron: causal attention counts half of s²
};

struct PublishedPoint {
  std::string id;
  std::string group;     ///< source group, e.g. "narayanan2021", "mcore-weak-scaling", "megatron-bridge"
  std::string subgroup;  ///< finer split for reports, e.g. "qwen3-30b-a3b/gb200"
  std::string source;    ///< citation, copied from the file
  Metric metric = Metric::kTokensPerSecondPerGpu;
  double value = 0;
  PublishedFlops flops = PublishedFlops::kMegatronCausal;
  Scenario scenario;                 ///< valid only when skip_reason is empty
  std::vector<std::string> assumed;  ///< what the publication left out and we filled in
  std::string skip_reason;           ///< why this point cannot be run (no architecture, unknown GPU, ...)
};

}  // namespace moesim::accuracy
