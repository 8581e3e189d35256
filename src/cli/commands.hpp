#pragma once
// Subcommand registration. Each register_* adds a CLI11 subcommand whose callback stores the work
// to do in `Commands`; run() executes it after parsing, so errors surface as exceptions that
// app.cpp maps to exit codes.
#include <functional>

#include <CLI/CLI.hpp>

namespace moesim::cli {

class Commands {
 public:
  void set(std::function<int()> action) { action_ = std::move(action); }
  int run() const { return action_ ? action_() : 0; }

 private:
  std::function<int()> action_;
};

void register_simulate(CLI::App& app, Commands& commands);
void register_models(CLI::App& app, Commands& commands);
void register_systems(CLI::App& app, Commands& commands);
void register_scenarios(CLI::App& app, Commands& commands);
/// `moesim scenario(s) from-megatron`, under the scenarios command.
void register_from_megatron(CLI::App& scenarios, Commands& commands);
void register_accuracy(CLI::App& app, Commands& commands);
void register_topo(CLI::App& app, Commands& commands);
void register_collective(CLI::App& app, Commands& commands);
void register_skew(CLI::App& app, Commands& commands);
void register_memory(CLI::App& app, Commands& commands);
/// `plan` and `merge`.
void register_plan(CLI::App& app, Commands& commands);
/// `report IN.json -o OUT.html`.
void register_report(CLI::App& app, Commands& commands);
/// `regress --baselines DIR [--update] [--tolerance 2%]`.
void register_regress(CLI::App& app, Commands& commands);
/// `calibrate [--scenario S | --model M] [--quick] --out PROFILE.json` (docs/profile.md).
void register_calibrate(CLI::App& app, Commands& commands);
/// `validate SCENARIO [--gpus N] [--layers K] [--measured RUN.json] [--predict] [--json OUT] [--html OUT]`
/// (docs/validation.md).
void register_validate(CLI::App& app, Commands& commands);

}  // namespace moesim::cli
