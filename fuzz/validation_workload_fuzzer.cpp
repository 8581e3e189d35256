// What the proxy runner reads: moesim.validation-workload/1 (`moesim validate --workload`).
#include "config/validation_workload_loader.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_accept_or_refuse([&] { (void)config::parse_validation_workload(text, fuzz::kInputName); });
  return 0;
}
