// Scenario files, as `moesim simulate FILE` and `moesim plan FILE` read them: parsed, defaults filled
// in, the layout rules applied. File references inside (a model's config.json, a topology, a routing
// histogram) resolve against a folder that does not exist, so they exercise the refusal path without
// touching the disk.
#include "config/json_reader.hpp"
#include "config/plan_loader.hpp"
#include "config/scenario_loader.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  const std::filesystem::path base_dir = "/nonexistent-moesim-fuzz";
  fuzz::expect_accept_or_refuse([&] {
    const auto obj = config::parse_json_text(text, fuzz::kInputName);
    (void)config::parse_scenario(obj, fuzz::kInputName, base_dir);
  });
  return 0;
}
