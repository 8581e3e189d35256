#include "scenario/scenario.hpp"

#include <algorithm>

namespace moesim {

std::string_view to_string(RecomputeGranularity g) {
  switch (g) {
    case RecomputeGranularity::kNone: return "none";
    case RecomputeGranularity::kSelective: return "selective";
    case RecomputeGranularity::kFull: return "full";
  }
  return "?";
}

std::string_view to_string(Dispatcher d) {
  switch (d) {
    case Dispatcher::kAlltoall: return "alltoall";
    case Dispatcher::kAllgather: return "allgather";
    case Dispatcher::kDeepep: return "deepep";
    case Dispatcher::kHybridep: return "hybridep";
  }
  return "?";
}

std::string_view to_string(RoutingDistribution d) {
  switch (d) {
    case RoutingDistribution::kBalanced: return "balanced";
    case RoutingDistribution::kUniform: return "uniform";
    case RoutingDistribution::kZipf: return "zipf";
    case RoutingDistribution::kLognormal: return "lognormal";
    case RoutingDistribution::kDirichlet: return "dirichlet";
    case RoutingDistribution::kHistogram: return "histogram";
  }
  return "?";
}

std::string_view to_string(AttentionBackend b) {
  switch (b) {
    case AttentionBackend::kFlash: return "flash";
    case AttentionBackend::kUnfused: return "unfused";
  }
  return "?";
}

bool RecomputeSpec::has(const std::string& module) const {
  // Full recompute replays every module of the layer; "none" replays nothing.
  if (granularity == RecomputeGranularity::kFull) return true;
  if (granularity == RecomputeGranularity::kNone) return false;
  return std::find(modules.begin(), modules.end(), module) != modules.end();
}

}  // namespace moesim
