#pragma once
// What a step's seconds on the critical rank are split into (Result's breakdown). The names are how
// results, plans, the `simulate` table, plan explanations and the trace's event categories spell
// them; they are written here only, and the readers iterate this table instead of listing them.
#include <string_view>

#include "core/named_enum.hpp"

namespace moesim {

enum class BreakdownCategory {
  kCompute,
  kTpComm,
  kCpComm,
  kEpComm,
  kPpComm,
  kDpComm,
  kOffloadComm,  ///< host-link (PCIe / NVLink-C2C) traffic of activation offloading
  kBubble,
  kExposedComm,  ///< the sum of the six *_comm categories (not a seventh kind of traffic)
  kOptimizer,
  kHostIdle,
};

/// In Breakdown's field order, which is the order the `simulate` table prints them.
inline constexpr auto kBreakdownCategoryNames = std::to_array<EnumName<BreakdownCategory>>(
    {{BreakdownCategory::kCompute, "compute"},
     {BreakdownCategory::kTpComm, "tp_comm"},
     {BreakdownCategory::kCpComm, "cp_comm"},
     {BreakdownCategory::kEpComm, "ep_comm"},
     {BreakdownCategory::kPpComm, "pp_comm"},
     {BreakdownCategory::kDpComm, "dp_comm"},
     {BreakdownCategory::kOffloadComm, "offload_comm"},
     {BreakdownCategory::kBubble, "bubble"},
     {BreakdownCategory::kExposedComm, "exposed_comm"},
     {BreakdownCategory::kOptimizer, "optimizer"},
     {BreakdownCategory::kHostIdle, "host_idle"}});

[[nodiscard]] constexpr std::string_view to_string(BreakdownCategory c) {
  return name_of(kBreakdownCategoryNames, c);
}

}  // namespace moesim
