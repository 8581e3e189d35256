// Placeholder until the topology work lands (replaced by the topology helper).
#include "cli/commands.hpp"
namespace moesim::cli {
void register_topo(CLI::App&, Commands&) {}
}  // namespace moesim::cli
