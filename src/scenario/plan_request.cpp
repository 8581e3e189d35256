#include "scenario/plan_request.hpp"

namespace moesim {

std::string_view to_string(PlanObjective o) { return name_of(kPlanObjectiveNames, o); }

std::string recompute_label(const RecomputeSpec& r) {
  if (r.granularity != RecomputeGranularity::kSelective) return std::string(to_string(r.granularity));
  // Megatron's default module list reads as plain "selective".
  if (r.modules.empty() || (r.modules.size() == 1 && r.modules[0] == RecomputeModule::kCoreAttn)) return "selective";
  std::string out = "selective(";
  for (std::size_t i = 0; i < r.modules.size(); ++i) {
    if (i) out += ",";
    out += to_string(r.modules[i]);
  }
  return out + ")";
}

}  // namespace moesim
