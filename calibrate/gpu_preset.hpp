#pragma once
// The moesim GPU preset (src/hw/gpus/*.json name) a CUDA device name corresponds to.
#include <string>
#include <string_view>

namespace moesim::calibrate {

/// "NVIDIA H200" -> "h200-sxm", "NVIDIA A100-SXM4-80GB" -> "a100-sxm-80g", ...; a device no preset
/// describes (a PCIe or NVL part, an unknown name) -> the device name itself.
[[nodiscard]] std::string gpu_preset_for(std::string_view device_name);

}  // namespace moesim::calibrate
