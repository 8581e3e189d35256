#pragma once
// What the op-level unit tests share: a scenario made of built-in presets (the caller sets the layout
// and calls validate_layout) and the lookup of one op of a pass by name.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "program/layer_cost.hpp"
#include "scenario/scenario.hpp"

namespace moesim::test {

/// `model` on `gpus` GPUs of the `system` preset with `training` (sequence, micro-batch, global batch);
/// everything else at the scenario's defaults.
inline Scenario preset_scenario(std::string name, const std::string& model, const std::string& system,
                                std::int64_t gpus, TrainingSpec training) {
  Scenario s;
  s.name = std::move(name);
  s.model = config::load_model_preset(model);
  s.system = config::load_system_preset(system, gpus);
  s.training = training;
  return s;
}

/// The first op called `name` in `ops` (a test failure when there is none).
inline const program::LayerOp& find_op(const std::vector<program::LayerOp>& ops, std::string_view name) {
  for (const auto& op : ops) {
    if (name == op.name) return op;
  }
  FAIL("no op ", name);
  return ops.front();
}

}  // namespace moesim::test
