// Topology files (moesim.topology/1): parsed and validated into the graph, then turned into the
// system description a scenario's cost models read.
#include "config/json_reader.hpp"
#include "config/topology_loader.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_accept_or_refuse([&] {
    const auto obj = config::parse_json_text(text, fuzz::kInputName);
    const auto topology = config::parse_topology(obj, fuzz::kInputName);
    (void)config::derive_system_spec(topology, fuzz::kInputName);
  });
  return 0;
}
