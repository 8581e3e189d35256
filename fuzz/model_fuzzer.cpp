// Model definitions (a scenario's "model" object, moesim's own preset format) and HuggingFace
// config.json files (the importer is lenient about keys it does not know but strict about values).
// The same bytes go through both: their key sets differ, so each one mostly sees the other's keys as
// unknown, which is a path worth exercising too.
#include "config/json_reader.hpp"
#include "config/model_loader.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_accept_or_refuse([&] {
    const auto obj = config::parse_json_text(text, fuzz::kInputName);
    fuzz::expect_accept_or_refuse([&] {
      try {
        (void)config::parse_model_definition(obj, "/model");
      } catch (InputError& e) {
        throw e.in_file(fuzz::kInputName);
      }
    });
    (void)config::import_hf_config(obj, fuzz::kInputName);
  });
  return 0;
}
