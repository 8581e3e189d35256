#pragma once
// Published speed of the deduplicating EP dispatcher kernels (DeepEP, HybridEP) inside one NVLink
// domain. Their NVLink traffic does not run at the link rate the closed form assumes: the kernels
// move tokens with a few SMs (DeepEP's copy loops, HybridEP's TMA pipelines) plus host-side layout
// work, so what a rank receives per second depends on the SMs given, the ranks in the group and the
// element type. The vendors publish that rate as "algorithm bandwidth": the bytes a rank receives,
// its own share included, over the call's time through the Torch API (deepseek-ai/DeepEP
// docs/README_Hybrid-EP.md). GPU presets carry those tables (src/hw/gpus/*.json, every table with
// its source); collective::CollectiveCostModel::ep_kernel_time prices a dispatch or combine from them
// where the preset has one.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/units.hpp"

namespace moesim::hw {

/// The NIC every published RDMA table (GpuSpec::ep_kernel_rdma) was measured with: one ConnectX-7
/// 400 Gb/s per GPU (DeepEP docs/legacy.md: "H800 ... each connected to a CX7 InfiniBand 400 Gb/s RDMA
/// network card"; HybridEP's H100 table: the HGX H100 rail of one 400 Gb/s NIC per GPU).
inline constexpr BytesPerSecond kEpRdmaTableNicBandwidth{400e9 / 8.0};

/// Which of a table's three measured rates.
enum class EpKernelPhase { kDispatchFp8, kDispatchBf16, kCombine };

/// One published measurement: `ranks` EP ranks on one NVLink domain, `sms` SMs given to the kernel.
struct EpKernelRow {
  std::int64_t ranks = 0;
  std::int64_t sms = 0;
  BytesPerSecond dispatch_fp8{0};   ///< dispatch of FP8 tokens (1 byte + scales per element)
  BytesPerSecond dispatch_bf16{0};  ///< dispatch of BF16 tokens
  BytesPerSecond combine{0};        ///< combine (BF16 reduction back to the token's rank)

  [[nodiscard]] BytesPerSecond rate(EpKernelPhase phase) const;
};

/// The rows of one kernel on one GPU, as published.
struct EpKernelTable {
  std::vector<EpKernelRow> rows;

  /// The algorithm bandwidth at `ranks` and `sms`: the rows of the nearest published rank count (a tie
  /// takes the larger, slower group; beyond the table its end), interpolated linearly in SMs and held
  /// at the end rows outside them (a kernel given more SMs than measured is not assumed faster).
  /// nullopt for an empty table.
  [[nodiscard]] std::optional<BytesPerSecond> rate(EpKernelPhase phase, std::int64_t ranks, std::int64_t sms) const;
};

}  // namespace moesim::hw
