// `moesim simulate SCENARIO [--json OUT] [--html OUT] [--fidelity simulation|estimate] [--trace TRACE.json]`
#include <cstdio>
#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "cli/progress_line.hpp"
#include "cli/scenario_errors.hpp"
#include "cli/summary.hpp"
#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/interrupt.hpp"
#include "predict/predict.hpp"
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
      ->check(CLI::IsMember(names_of(kFidelityNames)));
  sub->add_option("--trace", opt->trace_out,
                  "write the op-level timeline of the simulated ranks as a Chrome/Perfetto trace (docs/trace.md)");
  sub->add_flag("-q,--quiet", opt->quiet, "do not print the summary table");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      // Every output is checked before the work and written together after it: a failure or a
      // Ctrl-C in between leaves no file.
      OutputBatch outputs;
      outputs.expect("--json", opt->json_out);
      outputs.expect("--html", opt->html_out);
      outputs.expect("--trace", opt->trace_out);
      if (!opt->trace_out.empty() && opt->fidelity != to_string(Fidelity::kSimulation)) {
        throw InputError("--trace", opt->trace_out, "a trace needs the event simulation", "--fidelity simulation");
      }
      if (!opt->html_out.empty()) report::require_html_support();  // before the simulation, not after
      const Scenario s = config::load_scenario_argument(opt->scenario);
      const StopOnSignal stop_on_signal;
      ProgressLine progress(!opt->quiet);
      const Fidelity fidelity = *value_of(kFidelityNames, opt->fidelity);  // CLI11 checked the name
      sim::SimOptions so;
      // The HTML report draws the critical ranks' timeline, so it needs one as much as the trace does.
      so.record_timeline = !opt->trace_out.empty() || !opt->html_out.empty();
      so.stop_requested = [] { return stop_requested(); };
      so.progress = [&progress](double done, double total) { progress.update("simulating", done, total, "pipeline passes"); };
      const predict::Prediction p = naming_scenario_file(opt->scenario, [&] {
        predict::Prediction asked = predict::predict(s, fidelity, so);
        predict::add_whatif_baseline(asked.result, so);
        return asked;
      });
      const Result& r = p.result;
      progress.clear();
      if (!opt->trace_out.empty()) {
        report::TraceOptions to;
        to.other_data = {{"scenario", s.name}, {"seed", std::to_string(s.seed)}};
        report::append_chrome_trace(p.timeline, outputs.stream(opt->trace_out), to);
      }
      if (!opt->html_out.empty()) {
        const auto topology = report_topology(s);
        report::HtmlExtras extras;
        if (fidelity == Fidelity::kSimulation) extras.timeline = &p.timeline;
        extras.topology = topology ? &*topology : nullptr;
        if (!opt->trace_out.empty()) extras.trace_href = trace_link(opt->html_out, opt->trace_out);
        outputs.write(opt->html_out, report::result_to_html(r, extras));
      }
      if (!opt->json_out.empty()) outputs.write(opt->json_out, report::result_to_json_text(r));
      // The summary goes to stdout unless an output took it ("--json -").
      const bool stdout_taken = opt->json_out == kStdStream || opt->html_out == kStdStream || opt->trace_out == kStdStream;
      if (!opt->quiet && !stdout_taken) std::fputs(format_result_summary(r).c_str(), stdout);
      outputs.commit();
      return 0;
    });
  });
}

}  // namespace moesim::cli
