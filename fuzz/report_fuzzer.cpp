// What `moesim report IN.json -o OUT.html` reads back: a result (moesim.result/1) or a plan
// (moesim.plan/1) written by an earlier run, possibly edited by hand. Both the scenario it carries
// (for the topology graph) and the HTML rendering must accept it or refuse it cleanly.
#include "config/json_reader.hpp"
#include "config/report_inputs.hpp"
#include "fuzz/fuzz_target.hpp"
#include "report/html_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace moesim;
  const std::string text = fuzz::as_text(data, size);
  fuzz::expect_accept_or_refuse([&] { (void)config::scenario_of_document(text, fuzz::kInputName); });
  fuzz::expect_accept_or_refuse([&] { (void)report::file_document_to_html(config::parse_json_text(text, fuzz::kInputName), fuzz::kInputName); });
  return 0;
}
