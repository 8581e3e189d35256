#pragma once
// The two ways moesim answers a scenario: the closed-form estimate (estimate/) and the op-by-op event
// simulation (sim/), peers behind predict/. Its name is how results, baselines and the CLI spell it.
#include <string_view>

#include "core/named_enum.hpp"

namespace moesim {

enum class Fidelity { kEstimate, kSimulation };

inline constexpr auto kFidelityNames =
    std::to_array<EnumName<Fidelity>>({{Fidelity::kEstimate, "estimate"}, {Fidelity::kSimulation, "simulation"}});

[[nodiscard]] constexpr std::string_view to_string(Fidelity f) { return name_of(kFidelityNames, f); }

}  // namespace moesim
