// `moesim report IN.json -o OUT.html`: the HTML report of a result (moesim.result/1, from
// `simulate --json`) or a plan (moesim.plan/1, from `plan --json`), without re-running anything.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/file_io.hpp"
#include "cli/report_topology.hpp"
#include "config/json_reader.hpp"
#include "config/report_inputs.hpp"
#include "report/html_report.hpp"

namespace moesim::cli {

void register_report(CLI::App& app, Commands& commands) {
  struct Options {
    std::vector<std::string> in;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand(
      "report",
      "Write the self-contained HTML report of a result, plan or validation JSON file, or of two results or plans side "
      "by side (docs/reports.md).");
  sub->add_option("input", opt->in,
                  "a moesim.result/1 (simulate --json), moesim.plan/1 (plan --json) or moesim.validation/1 "
                  "(validate --json) file; two results or plans: the comparison")
      ->required()
      ->expected(1, 2);
  sub->add_option("-o,--output", opt->out, "the HTML file to write")->required();
  sub->callback([opt, &commands] {
    commands.set([opt] {
      check_output_path_of("--output", opt->out);
      if (opt->in.size() == 2) {
        const std::string& a = opt->in[0];
        const std::string& b = opt->in[1];
        const std::string html = report::comparison_to_html(config::parse_json_text(read_text_file(a), a), a,
                                                            config::parse_json_text(read_text_file(b), b), b);
        write_file_atomically(opt->out, html);
        std::fputs(fmt::format("wrote {}\n", opt->out).c_str(), stdout);
        return 0;
      }
      const std::string& in = opt->in.front();
      const std::string text = read_text_file(in);
      const auto scenario = config::scenario_of_document(text, in);
      const auto topology = scenario ? report_topology(*scenario) : std::nullopt;
      report::HtmlExtras extras;
      extras.topology = topology ? &*topology : nullptr;
      write_file_atomically(opt->out, report::file_document_to_html(config::parse_json_text(text, in), in, extras));
      std::fputs(fmt::format("wrote {}\n", opt->out).c_str(), stdout);
      return 0;
    });
  });
}

}  // namespace moesim::cli
