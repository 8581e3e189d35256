// `moesim simulate SCENARIO [--json OUT] [--html OUT] [--fidelity simulation|estimate] [--trace TRACE.json]`
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/scenario_errors.hpp"
#include "cli/summary.hpp"
#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "estimate/step_estimator.hpp"
#include "sim/step_simulator.hpp"
#include "cli/report_topology.hpp"
#include "report/html_report.hpp"
#include "report/result_json.hpp"
#include "report/trace_json.hpp"

namespace moesim::cli {
namespace {

// The trace as the page links it: relative to the page's folder, so the pair can be moved together.
std::string trace_link(const std::string& html, const std::string& trace) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::absolute(fs::path(html), ec).parent_path();
  const fs::path rel = fs::absolute(fs::path(trace), ec).lexically_relative(dir);
  return rel.empty() ? trace : rel.generic_string();
}

}  // namespace

void register_simulate(CLI::App& app, Commands& commands) {
  struct Options {
    std::string scenario, json_out, html_out, trace_out, fidelity = "simulation";
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("simulate", "Answer one scenario: step time, throughput, MFU, breakdown, memory.");
  sub->add_option("scenario", opt->scenario,
                  "scenario JSON file (../shared/spec/scenario.md), or a built-in scenario name (`moesim scenarios list`)")
      ->required();
  sub->add_option("--json", opt->json_out, "write the result (schema moesim.result/1) to this file");
  sub->add_option("--html", opt->html_out,
                  "write a self-contained HTML report (summary, breakdown, memory, timeline of the critical ranks; docs/reports.md)");
  sub->add_option("--fidelity", opt->fidelity,
                  "simulation (event simulation of the step, the default) or estimate (closed form, for sweeps)")
      ->check(CLI::IsMember({"estimate", "simulation"}));
  sub->add_option("--trace", opt->trace_out,
                  "write the op-level timeline of the simulated ranks as a Chrome/Perfetto trace (docs/trace.md)");
  sub->add_flag("-q,--quiet", opt->quiet, "do not print the summary table");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      if (!opt->html_out.empty()) report::require_html_support();  // before the simulation, not after
      const Scenario s = config::load_scenario_argument(opt->scenario);
      Result r;
      if (opt->fidelity == "simulation") {
        sim::SimOptions so;
        // The HTML report draws the critical ranks' timeline, so it needs one as much as the trace does.
        so.record_timeline = !opt->trace_out.empty() || !opt->html_out.empty();
        sim::SimOutput out = naming_scenario_file(opt->scenario, [&] { return sim::simulate_step(s, so); });
        r = std::move(out.result);
        if (!opt->trace_out.empty()) {
          report::TraceOptions to;
          to.other_data = {{"scenario", s.name}, {"seed", std::to_string(s.seed)}};
          report::write_chrome_trace(out.timeline, opt->trace_out, to);
        }
        if (!opt->html_out.empty()) {
          const auto topology = report_topology(s);
          report::HtmlExtras extras;
          extras.timeline = &out.timeline;
          extras.topology = topology ? &*topology : nullptr;
          if (!opt->trace_out.empty()) extras.trace_href = trace_link(opt->html_out, opt->trace_out);
          write_file_atomically(opt->html_out, report::result_to_html(r, extras));
        }
      } else {
        if (!opt->trace_out.empty()) {
          throw InputError("--trace", opt->trace_out, "a trace needs the event simulation", "--fidelity simulation");
        }
        r = naming_scenario_file(opt->scenario, [&] { return estimate::estimate_step(s); });
        if (!opt->html_out.empty()) {
          const auto topology = report_topology(s);
          report::HtmlExtras extras;
          extras.topology = topology ? &*topology : nullptr;
          write_file_atomically(opt->html_out, report::result_to_html(r, extras));
        }
      }
      if (!opt->json_out.empty()) write_file_atomically(opt->json_out, report::result_to_json_text(r));
      if (!opt->quiet) std::fputs(format_result_summary(r).c_str(), stdout);
      return 0;
    });
  });
}

}  // namespace moesim::cli
