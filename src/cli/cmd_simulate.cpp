// `moesim simulate SCENARIO [--json OUT] [--fidelity estimate]`
#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/summary.hpp"
#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "estimate/step_estimator.hpp"
#include "report/result_json.hpp"

namespace moesim::cli {

void register_simulate(CLI::App& app, Commands& commands) {
  struct Options {
    std::string scenario, json_out, fidelity = "estimate";
    bool quiet = false;
  };
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("simulate", "Answer one scenario: step time, throughput, MFU, breakdown, memory.");
  sub->add_option("scenario", opt->scenario,
                  "scenario JSON file (../shared/spec/scenario.md), or a built-in scenario name (`moesim scenarios list`)")
      ->required();
  sub->add_option("--json", opt->json_out, "write the result (schema moesim.result/1) to this file");
  sub->add_option("--fidelity", opt->fidelity, "estimate (closed form); the event simulation arrives with the engine")
      ->check(CLI::IsMember({"estimate", "simulation"}));
  sub->add_flag("-q,--quiet", opt->quiet, "do not print the summary table");
  sub->callback([opt, &commands] {
    commands.set([opt] {
      if (opt->fidelity == "simulation") {
        throw InputError("--fidelity", "simulation",
                         "the event simulation is not built yet (it comes with the training-step simulation)",
                         "estimate");
      }
      const Scenario s = config::load_scenario_argument(opt->scenario);
      const Result r = estimate::estimate_step(s);
      if (!opt->json_out.empty()) write_file_atomically(opt->json_out, report::result_to_json_text(r));
      if (!opt->quiet) std::fputs(format_result_summary(r).c_str(), stdout);
      return 0;
    });
  });
}

}  // namespace moesim::cli
