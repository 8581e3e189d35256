#include "hw/profile.hpp"

#include <algorithm>

namespace moesim::hw {

std::string_view to_string(ProfileSource s) { return name_of(kProfileSourceNames, s); }
std::string_view to_string(GroupedImplementation g) { return name_of(kGroupedImplementationNames, g); }
std::string_view to_string(MemoryKernel k) { return name_of(kMemoryKernelNames, k); }
std::string_view to_string(AttentionDirection d) { return name_of(kAttentionDirectionNames, d); }
std::string_view to_string(AttentionImplementation i) { return name_of(kAttentionImplementationNames, i); }
std::string_view to_string(ProfileCollectiveOp op) { return name_of(kProfileCollectiveOpNames, op); }

std::optional<std::string_view> profile_precision_name(Precision p) {
  if (std::ranges::find(kProfilePrecisions, p) == kProfilePrecisions.end()) return std::nullopt;
  return to_string(p);
}

}  // namespace moesim::hw
