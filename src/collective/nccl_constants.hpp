#pragma once
// Constants shared by the closed form (algorithms.cpp) and the flow decomposition
// (flow_collective.cpp), so both fidelities price the same collective the same way.
#include <algorithm>

namespace moesim::collective::nccl {

// Pipeline fill: NCCL moves each channel's data in fixed chunks and the first chunk must cross every
// hop before the pipeline is full; NCCL's tuning model omits this. The pipeline holds at most
// kPipelineBytes × hops (≈ 24 channels × 128 KiB chunks per hop, one constant for all algorithms and
// GPUs, checked against both published nccl-tests sweeps in tests/collective) and never more than
// the message itself, since a message shorter than the pipeline is cut into smaller chunks.
inline constexpr double kPipelineBytes = 3.0 * 1024 * 1024;

/// Extra bytes the pipeline fill costs at the bus bandwidth (LL128 and Simple; LL pipelines per
/// 8-byte line and has none). Both bounds hold — the fill tends to the message for small messages
/// and to the pipeline's capacity for large ones — and they combine as a harmonic sum,
/// size·cap / (size + cap), rather than min(size, cap): the chunk a channel actually moves is its
/// share of the message cut per rank, so it grows with the message up to NCCL's maximum chunk and
/// the ramp has no corner. min() charged the whole cap to a message of the pipeline's size and put
/// the A100 8-GPU sweep 13-16 % low from 8 to 32 MiB, around its cap of 8 hops × 3 MiB = 24 MiB
/// (the H100 sweep runs NVLS, 2 hops, where the two forms differ only at 2-8 MiB).
[[nodiscard]] inline double pipeline_fill_bytes(double bytes, double hops) {
  const double cap = kPipelineBytes * std::max(hops, 1.0);
  return bytes > 0 ? bytes * cap / (bytes + cap) : 0.0;
}

// Point-to-point channels (send/recv, hence all-to-all): src/graph/paths.cc ncclTopoComputeP2pChannels
// takes p2pnChannels = pow2Up(min(collective channels, NCCL_MAX_P2P_NCHANNELS = MAXCHANNELS)), and
// NCCL's init line on HGX H100 and on GB200 NVL72 trays reads "32 coll channels, ..., 32 p2p
// channels". Each channel is one CTA resident on its own SM while the all-to-all runs.
inline constexpr int kP2pChannels = 32;

// nccl-tests times each call from the host: launch, start-up and completion are part of every
// measured collective (the 8-GPU sweeps bottom out at 25-45 µs, above NCCL's modelled 15 µs for LL).
inline constexpr double kCallOverhead = 10e-6;
// NVLink SHARP all-reduce: the NCCL maintainer's expected peak on 8 H100 is busbw ~480 GB/s, algbw
// ~275 GB/s (nccl-tests issue #212, published.json nccl-issue212-h100-8gpu-nvls-expected): 275 of
// 450 GB/s line rate per direction. Used for every NVLS-capable switch generation.
inline constexpr double kNvlsAlgbwShare = 274.3 / 450.0;
// tuning.cc base latency of Ring/Simple and hwLat[NVLINK][NVLS][Simple], microseconds.
inline constexpr double kRingSimpleBaseLatency = 8.4e-6;
inline constexpr double kNvlsLatency = 25e-6;
// tuning.cc (NCCL 2.30.7) Tree/Simple: baseLat 8.4 µs, hwLat[NVLINK][Tree][Simple] 4.0 µs per chain
// step, hwLat[NET][Tree][Simple] 14 µs per tree level.
inline constexpr double kTreeSimpleBaseLatency = 8.4e-6;
inline constexpr double kTreeSimpleNvlinkStep = 4.0e-6;
inline constexpr double kTreeSimpleNetStep = 14.0e-6;
// Double binary tree: tuning.cc multiplies the tree's bus bandwidth by 0.85 for the tree pattern.
inline constexpr double kTreeShare = 0.85;
// Network post overhead: tuning.cc getNetOverhead() charges 1 µs per network operation on x86
// (NCCL_NET_OVERHEAD; 2 µs on AMD) and triples it for Simple. A proxy posts its messages one after
// the other, so an all-to-all pays it once per message the busiest proxy posts.
inline constexpr double kNetPostOverhead = 3.0e-6;

}  // namespace moesim::collective::nccl
