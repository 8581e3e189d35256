// Measured routing histograms, CSV and JSON (moesim.routing-histogram/1), checked against a real MoE
// model (Mixtral 8x7B: 32 MoE layers × 8 experts). The first byte picks the format so that one corpus
// covers both.
#include "config/model_loader.hpp"
#include "config/routing_histogram.hpp"
#include "fuzz/fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  static const model::ModelSpec model = config::load_model_preset("mixtral-8x7b");
  if (size == 0) return 0;
  const auto format = (data[0] & 1) != 0 ? config::HistogramFormat::kJson : config::HistogramFormat::kCsv;
  const std::string text = fuzz::as_text(data + 1, size - 1);
  fuzz::expect_accept_or_refuse([&] { (void)config::parse_routing_histogram(text, format, fuzz::kInputName, model); });
  return 0;
}
