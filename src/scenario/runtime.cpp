#include "scenario/runtime.hpp"

#include <algorithm>

namespace moesim {

bool RuntimeSpec::captures(CudaGraphScope scope) const {
  return std::find(cuda_graph.begin(), cuda_graph.end(), scope) != cuda_graph.end();
}

bool RuntimeSpec::has(Fusion fusion) const { return std::find(fusions.begin(), fusions.end(), fusion) != fusions.end(); }

std::string_view to_string(CudaGraphScope s) { return name_of(kCudaGraphScopeNames, s); }
std::string_view to_string(Fusion f) { return name_of(kFusionNames, f); }

}  // namespace moesim
