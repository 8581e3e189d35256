#pragma once
// Whether this machine has an NVIDIA GPU the measuring commands (calibrate, validate) could use.

namespace moesim::cli {

/// True when the NVIDIA driver exposes a device (/dev/nvidiactl, or a GPU under /proc/driver/nvidia).
[[nodiscard]] bool cuda_device_present();

}  // namespace moesim::cli
