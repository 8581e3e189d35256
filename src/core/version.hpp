#pragma once
#include <string_view>

#include "moesim_version.hpp"

namespace moesim {
/// The version written into every result (`moesim_version`) and printed by `moesim --version`.
inline constexpr std::string_view kVersion = MOESIM_VERSION_STRING;
}  // namespace moesim
