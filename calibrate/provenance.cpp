#include "calibrate/provenance.hpp"

#include <ctime>

#include <nccl.h>
#include <unistd.h>

#include "calibrate/gpu_preset.hpp"
#include "kernels/device_info.hpp"
#include "kernels/nccl_check.hpp"

namespace moesim::calibrate {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

hw::ProfileProvenance measured_provenance(int gpus_visible, const std::string& command) {
  const kernels::DeviceInfo d = kernels::query_device(0);
  hw::ProfileProvenance p;
  p.gpu = gpu_preset_for(d.name);
  p.device_name = d.name;
  p.sm_count = d.sm_count;
  p.sm_clock_mhz = d.sm_clock_mhz;
  p.memory_clock_mhz = d.memory_clock_mhz;
  p.gpus_visible = gpus_visible;
  p.driver = kernels::driver_version();
  p.cuda_runtime = kernels::cuda_runtime_version();
  p.cublas = kernels::cublas_version();
  int nccl = 0;
  MOESIM_NCCL_CHECK(ncclGetVersion(&nccl));  // major * 10000 + minor * 100 + patch since 2.9
  p.nccl = std::to_string(nccl / 10000) + "." + std::to_string((nccl / 100) % 100) + "." + std::to_string(nccl % 100);
  p.date = utc_now_iso8601();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  p.command = command;
  return p;
}

}  // namespace moesim::calibrate
