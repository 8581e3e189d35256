#include "cli/gpu_presence.hpp"

#include <filesystem>

namespace moesim::cli {

bool cuda_device_present() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists("/dev/nvidiactl", ec)) return true;
  const fs::path gpus("/proc/driver/nvidia/gpus");
  return fs::is_directory(gpus, ec) && !fs::is_empty(gpus, ec);
}

}  // namespace moesim::cli
