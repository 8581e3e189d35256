#pragma once
// Datasheet and microbenchmark figures of one GPU type. Presets live in src/hw/gpus/*.json, every
// figure with its source; config/ loads them.
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "hw/ep_kernel_rates.hpp"

namespace moesim::hw {

struct GpuSpec {
  std::string name;          ///< preset name: "h100-sxm"
  std::string display_name;  ///< "NVIDIA H100 SXM5 80GB"
  std::string architecture;  ///< "ampere", "hopper", "blackwell"
  /// Dense (no sparsity) tensor-core peak per precision; a precision absent here is unsupported.
  std::map<Precision, FlopsPerSecond> dense_peak;
  Bytes hbm_capacity;               ///< usable HBM per GPU
  BytesPerSecond hbm_bandwidth;     ///< datasheet HBM bandwidth
  BytesPerSecond nvlink_bandwidth;  ///< NVLink bandwidth per GPU, one direction (H100: 450 GB/s)
  int sm_count = 0;
  /// Best measured dense GEMM rate / datasheet peak (BF16), from published microbenchmarks: the
  /// ceiling the GEMM efficiency model approaches for large, well-shaped problems.
  double gemm_peak_efficiency = 0;
  /// The same ceiling measured for a narrower tensor-core format where one is published (FP8 and FP4
  /// GEMMs draw more power per FLOP and sustain a lower fraction of their peak); absent: the BF16 figure.
  std::map<Precision, double> gemm_peak_efficiency_by_precision;
  /// Measured device-to-device copy rate / datasheet HBM bandwidth: the ceiling of memory-bound kernels.
  double hbm_efficiency = 0;
  /// Measured FlashAttention forward rate / datasheet BF16 peak (hd128, long sequence).
  double attention_efficiency = 0;
  /// The share of these tensor-core rates a training step sustains on this architecture: the fitted
  /// constant of the architecture (calibrate/fitted/constants.json; 1 where none is fitted), which
  /// scales the GEMM and attention compute rates. Not a datasheet figure: config sets it from the fit.
  double sustained_tensor_rate = 1.0;
  /// Published intra-domain algorithm bandwidth of the deduplicating EP dispatchers, by dispatcher
  /// name ("deepep", "hybridep"); a dispatcher absent here is priced at the NVLink rate.
  std::map<std::string, EpKernelTable, std::less<>> ep_kernel_algbw;  // std::less<>: looked up by string_view
  /// Published inter-domain rate of the same kernels: the bytes a rank sends over RDMA (its tokens
  /// deduplicated per destination domain) per second, `ranks` being the whole EP group (DeepEP's
  /// "bottleneck bandwidth (RDMA)", HybridEP's "IB bandwidth"). A property of the GPU's NIC as much as
  /// of the GPU: every table says which NIC it was measured with. Absent: the network link rate.
  std::map<std::string, EpKernelTable, std::less<>> ep_kernel_rdma;
  /// Whether published rates tell DeepEP and HybridEP apart here: one of the tables has both.
  [[nodiscard]] bool publishes_both_ep_kernels() const {
    const auto both = [](const auto& t) { return t.count("deepep") != 0 && t.count("hybridep") != 0; };
    return both(ep_kernel_algbw) || both(ep_kernel_rdma);
  }
  std::map<std::string, std::string> sources;  ///< figure name → citation

  /// Sustained GEMM ceiling of precision `p` (its own measurement, else the BF16 one).
  [[nodiscard]] double gemm_efficiency_ceiling(Precision p) const {
    auto it = gemm_peak_efficiency_by_precision.find(p);
    return it == gemm_peak_efficiency_by_precision.end() ? gemm_peak_efficiency : it->second;
  }
  [[nodiscard]] bool supports(Precision p) const { return dense_peak.count(p) != 0; }
  [[nodiscard]] std::optional<FlopsPerSecond> peak(Precision p) const {
    auto it = dense_peak.find(p);
    if (it == dense_peak.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace moesim::hw
