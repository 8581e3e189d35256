#pragma once
// A scenario as the Megatron-LM command line that runs it, and back (issue 31): `moesim plan --emit
// megatron` prints the winner's arguments, `moesim plan --emit bridge` its Megatron-Bridge recipe
// overrides, and `moesim scenario from-megatron ARGS-FILE` turns the command a user runs today into a
// scenario. Both directions live here so that each flag is spelled once; tests/scenario/
// megatron_args_test.cpp checks every emitted flag against Megatron-LM's parser
// (tests/data/megatron-lm-arguments.txt) and the round trip.
//
// What Megatron's arguments do not say stays moesim's: the routing and placement of the experts, the
// host, the measured host wait, the seed, whatif, the FLOP convention, sliding windows and encoders.
#include <string>
#include <vector>

#include "hw/system_spec.hpp"
#include "scenario/scenario.hpp"

namespace moesim {

/// The Megatron-LM arguments (pretrain_gpt.py) of the scenario's model, layout, batch, precision,
/// recompute, MoE, optimizer, CUDA-graph, fusion and offload settings: tokens, each flag followed by
/// its values.
[[nodiscard]] std::vector<std::string> megatron_args(const Scenario& s);

/// The same settings as Megatron-Bridge ConfigContainer overrides (`model.tensor_model_parallel_size=8`),
/// one per entry, for a recipe's command line (`python run_recipe.py ... OVERRIDES`).
[[nodiscard]] std::vector<std::string> bridge_overrides(const Scenario& s);

/// The arguments joined into a shell command line continued over lines ("  --flag value \" ...).
[[nodiscard]] std::string megatron_command_text(const std::vector<std::string>& args);

struct MegatronImport {
  Scenario scenario;  ///< validated (model and layout)
  /// The flags that were read but have no meaning in moesim (learning rate, data paths, logging, ...),
  /// each once in the order given: said to the user, never silently dropped.
  std::vector<std::string> ignored;
};

/// Reads a Megatron-LM command line (`torchrun ... pretrain_gpt.py --flag value ...`; anything up to
/// the script is the launcher's; `\`-newlines and `#` comments allowed) into a scenario on `system`.
/// A flag moesim reads with a wrong value, or a missing required one, is an InputError naming `file`,
/// the flag, the value, the rule and the allowed values.
[[nodiscard]] MegatronImport scenario_from_megatron(const std::string& text, const std::string& file,
                                                    const hw::SystemSpec& system);

}  // namespace moesim
