#include "cli/app.hpp"

#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/version.hpp"

namespace moesim::cli {

int run(int argc, char** argv) {
  CLI::App app{
      "moesim: cluster simulator and performance planner for Mixture-of-Experts training on NVIDIA GPU clusters.\n"
      "Exit codes: 0 ok, 1 internal error, 2 bad input, 3 no feasible answer, 130 stopped by Ctrl-C (143 by SIGTERM).",
      "moesim"};
  app.set_version_flag("--version", std::string("moesim ") + std::string(kVersion));
  app.require_subcommand(1);
  Commands commands;
  register_simulate(app, commands);
  register_models(app, commands);
  register_systems(app, commands);
  register_scenarios(app, commands);
  register_accuracy(app, commands);
  register_topo(app, commands);
  register_collective(app, commands);
  register_skew(app, commands);
  register_memory(app, commands);
  register_plan(app, commands);
  register_report(app, commands);
  register_regress(app, commands);
  register_calibrate(app, commands);
  register_validate(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line in moesim's own form, like every other input error (CLI11's is two lines of its own).
    std::string help = "moesim";
    for (const CLI::App* sub : app.get_subcommands()) help += " " + sub->get_name();
    // CLI11 names an option as "--opt: ..."; moesim's messages say "at --opt: ...".
    std::string what = e.what();
    if (what.rfind("-", 0) == 0 && what.find(": ") != std::string::npos) what = "at " + what;
    std::fprintf(stderr, "moesim: error: %s (see '%s --help')\n", what.c_str(), help.c_str());
    return static_cast<int>(ExitCode::kBadInput);
  }
  try {
    return commands.run();
  } catch (const InputError& e) {
    std::fprintf(stderr, "moesim: error: %s\n", e.what());
    return static_cast<int>(ExitCode::kBadInput);
  } catch (const StoppedError& e) {
    std::fprintf(stderr, "moesim: stopped: %s\n", e.what());
    return stop_signal() != 0 ? stop_exit_code() : 130;
  } catch (const InfeasibleError& e) {
    std::fprintf(stderr, "moesim: no feasible answer: %s\n", e.what());
    return static_cast<int>(ExitCode::kInfeasible);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "moesim: internal error: %s\n", e.what());
    return static_cast<int>(ExitCode::kInternal);
  }
}

}  // namespace moesim::cli
