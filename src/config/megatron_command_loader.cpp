#include "config/megatron_command_loader.hpp"

#include <charconv>
#include <cstdint>

#include "config/fitted_constants.hpp"
#include "config/hw_loader.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace moesim::config {

MegatronImport load_megatron_command(const std::string& path, const std::string& system) {
  const auto colon = system.rfind(':');
  std::int64_t gpus = 0;
  const char* first = system.data() + (colon == std::string::npos ? 0 : colon + 1);
  const char* last = system.data() + system.size();
  const auto [ptr, ec] = std::from_chars(first, last, gpus);
  if (colon == std::string::npos || colon == 0 || ec != std::errc() || ptr != last || gpus < 1) {
    throw InputError("--system", system, "a cluster preset and its GPU count", "PRESET:GPUS, e.g. hgx-h100:64");
  }
  const hw::SystemSpec spec = load_system_preset(system.substr(0, colon), gpus, "--system");
  MegatronImport imported = scenario_from_megatron(read_text_file(path), path, spec);
  imported.scenario.host_costs = fitted_host_costs();
  return imported;
}

}  // namespace moesim::config
