#pragma once
// `moesim scenario from-megatron ARGS-FILE --system PRESET:GPUS`: a Megatron-LM command line in a file
// read into a scenario on a cluster preset (scenario/megatron_args.hpp), with the fitted host costs
// every scenario config reads gets.
#include <string>

#include "scenario/megatron_args.hpp"

namespace moesim::config {

/// `system`: "PRESET:GPUS" (hgx-h100:64). Errors name `path` or the --system option.
[[nodiscard]] MegatronImport load_megatron_command(const std::string& path, const std::string& system);

}  // namespace moesim::config
