#pragma once
// GPU presets (src/hw/gpus/*.json) and cluster presets (topologies/systems/*.json), embedded in the
// binary; each figure carries its source in the file.
#include <string>
#include <vector>

#include "config/json_reader.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/system_spec.hpp"

namespace moesim::config {

[[nodiscard]] std::vector<std::string> gpu_preset_names();
/// Unknown name → InputError at `path` listing the known GPUs.
[[nodiscard]] hw::GpuSpec load_gpu_preset(const std::string& name, const std::string& path = "/system/gpu");

[[nodiscard]] std::vector<std::string> system_preset_names();
/// A cluster preset sized to `gpus` GPUs. Unknown name → InputError at `path` listing the known systems.
[[nodiscard]] hw::SystemSpec load_system_preset(const std::string& name, std::int64_t gpus,
                                                const std::string& path = "/system/preset");

/// Parses one GPU / system preset file (used for the embedded files and by tests on bad files).
[[nodiscard]] hw::GpuSpec parse_gpu_spec(const Json& obj, const std::string& file);
[[nodiscard]] hw::SystemSpec parse_system_spec(const Json& obj, const std::string& file);

}  // namespace moesim::config
