#include "scenario/scenario.hpp"

#include <algorithm>

namespace moesim {

std::string_view to_string(RecomputeGranularity g) { return name_of(kRecomputeGranularityNames, g); }
std::string_view to_string(Dispatcher d) { return name_of(kDispatcherNames, d); }
std::string_view to_string(RoutingDistribution d) { return name_of(kRoutingDistributionNames, d); }
std::string_view to_string(PlacementStrategy p) { return name_of(kPlacementStrategyNames, p); }
std::string_view to_string(AttentionBackend b) { return name_of(kAttentionBackendNames, b); }

bool RecomputeSpec::has(RecomputeModule module) const {
  // Full recompute replays every module of the layer; "none" replays nothing.
  if (granularity == RecomputeGranularity::kFull) return true;
  if (granularity == RecomputeGranularity::kNone) return false;
  return std::find(modules.begin(), modules.end(), module) != modules.end();
}

}  // namespace moesim
