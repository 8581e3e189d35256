#pragma once
// Sorting a step's time into the components `moesim validate` compares (validation_phases()):
// attention block, MLP or MoE block compute, EP all-to-all, TP collectives, DP gradient reduction
// and the optimizer update. The proxy runner brackets the same blocks with CUDA events.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "record/timeline.hpp"

namespace moesim::validate {

/// The phase of one op of the simulation's timeline, from its category ("compute", "ep_comm", ...)
/// and name ("expert_fc1 (wgrad)"): "attention", "mlp", "ep_comm", "tp_comm", "dp_comm", "optimizer",
/// "head" (embedding, final norm, LM head, loss, MTP: not run by the proxy) or "other" (pipeline
/// and context-parallel traffic, which the one-stage proxy has none of).
[[nodiscard]] std::string phase_of(std::string_view category, std::string_view op_name);

/// Seconds per phase the simulation's timeline spends on `process` (each op's own duration, summed).
[[nodiscard]] std::map<std::string, double> timeline_phases(const Timeline& t, std::int32_t process);

}  // namespace moesim::validate
