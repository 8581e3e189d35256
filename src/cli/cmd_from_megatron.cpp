// `moesim scenario from-megatron ARGS-FILE --system PRESET:GPUS [-o OUT]`: the Megatron-LM command a
// user runs today as a scenario (scenario/megatron_args.hpp), so that simulate and plan start from it.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "config/megatron_command_loader.hpp"
#include "core/file_io.hpp"
#include "core/format.hpp"
#include "report/scenario_json.hpp"

namespace moesim::cli {

void register_from_megatron(CLI::App& scenarios, Commands& commands) {
  struct Options {
    std::string args_file, system, out = "-";
  };
  auto o = std::make_shared<Options>();
  auto* sub = scenarios.add_subcommand(
      "from-megatron",
      "Turn a Megatron-LM command line (model, layout, batch, precision, MoE, recompute, CUDA-graph and fusion flags) "
      "into a scenario.");
  sub->add_option("args", o->args_file, "a file holding the command (torchrun ... pretrain_gpt.py --flag value ...)")
      ->required();
  sub->add_option("--system", o->system, "the cluster it runs on: PRESET:GPUS (`moesim systems list`)")->required();
  sub->add_option("-o,--output", o->out, "the scenario file to write (default: standard output)");
  sub->callback([o, &commands] {
    commands.set([o] {
      OutputBatch outputs;
      outputs.expect("--output", o->out);
      const MegatronImport imported = config::load_megatron_command(o->args_file, o->system);
      if (!imported.ignored.empty()) {
        std::fputs(fmt::format("moesim: not modelled, ignored: {}\n", join(imported.ignored, " ")).c_str(), stderr);
      }
      outputs.write(o->out, report::scenario_to_json_text(imported.scenario));
      outputs.commit();
      if (o->out != kStdStream) std::fputs(fmt::format("wrote {}\n", o->out).c_str(), stdout);
      return 0;
    });
  });
}

}  // namespace moesim::cli
