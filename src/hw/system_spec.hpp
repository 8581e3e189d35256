#pragma once
// A cluster: GPUs grouped in NVLink domains (an HGX node of 8, or an NVL72 rack), one or more NICs
// per GPU on a scale-out fabric. Presets live in topologies/systems/*.json with sources; the full
// topology graph arrives with the network issue.
#include <cstdint>
#include <map>
#include <string>

#include "core/units.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/host_kind.hpp"

namespace moesim::hw {

struct SystemSpec {
  std::string name;            ///< preset name: "hgx-h100"
  std::string description;
  GpuSpec gpu;                 ///< the GPU type (overridable with system.gpu in a scenario)
  std::int64_t gpus = 0;       ///< GPUs in this cluster (scenario system.gpus)
  std::int64_t gpus_per_node = 0;        ///< GPUs per host (HGX: 8; GB200 compute tray: 4)
  HostKind host = HostKind::kX86;        ///< the CPU that launches the GPUs' kernels
  std::int64_t nvlink_domain_size = 0;   ///< GPUs that share one NVLink/NVSwitch fabric (8, or 72 on NVL72)
  bool nvls = false;                     ///< NVLink SHARP (in-switch reduction) available
  std::int64_t nics_per_gpu = 1;
  BytesPerSecond nic_bandwidth;          ///< per NIC, one direction (400 Gb/s NDR = 50 GB/s)
  /// Fraction of line rate NCCL reaches for large messages on each tier (protocol overhead, from
  /// nccl-tests measurements; see the preset's sources).
  double nvlink_efficiency = 0;
  double network_efficiency = 0;
  Seconds nvlink_latency;     ///< per-step latency inside an NVLink domain (NCCL tuning.cc hwLat, Simple)
  Seconds network_latency;    ///< per-step latency across the scale-out fabric
  /// Host link of one GPU, one direction, as reached with every GPU of the host copying (PCIe on x86,
  /// NVLink-C2C on Grace): activation and optimizer offloading move their bytes over it.
  BytesPerSecond host_link_bandwidth;
  /// The host's DRAM bandwidth per GPU (the CPUs' peak over the GPUs they serve): where the optimizer
  /// steps the offloaded share of its state.
  BytesPerSecond host_memory_bandwidth;
  std::map<std::string, std::string> sources;

  [[nodiscard]] std::int64_t num_nvlink_domains() const {
    return nvlink_domain_size > 0 ? (gpus + nvlink_domain_size - 1) / nvlink_domain_size : 0;
  }
  /// Scale-out bandwidth of one GPU, one direction (all its NICs).
  [[nodiscard]] BytesPerSecond network_bandwidth_per_gpu() const {
    return nic_bandwidth * static_cast<double>(nics_per_gpu);
  }
};

}  // namespace moesim::hw
