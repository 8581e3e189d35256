#pragma once
// The CPU that runs a GPU's training process: it launches every kernel and waits at every host
// synchronisation, so its speed is part of the step on small-kernel workloads (eager MoE). A system
// preset names its host with a source (topologies/systems/*.json); a scenario may override it
// (runtime.host).
#include <array>
#include <cstdint>

#include "core/named_enum.hpp"

namespace moesim::hw {

enum class HostKind : std::uint8_t {
  kX86,    ///< an x86 server CPU beside the GPUs, over PCIe (DGX/HGX: Intel Xeon or AMD EPYC)
  kGrace,  ///< an NVIDIA Grace (Arm Neoverse V2) superchip CPU, over NVLink-C2C (GB200, GB300)
};
inline constexpr auto kHostKindNames =
    std::to_array<EnumName<HostKind>>({{HostKind::kX86, "x86"}, {HostKind::kGrace, "grace"}});

}  // namespace moesim::hw
