#pragma once
// Constants shared by the closed form (algorithms.cpp) and the flow decomposition
// (flow_collective.cpp), so both fidelities price the same collective the same way.
namespace moesim::collective::nccl {

// Pipeline fill: NCCL moves each channel's data in fixed chunks and the first chunk must cross every
// hop before the pipeline is full; NCCL's tuning model omits this. Cost: min(size, kPipelineBytes ×
// hops) more bytes at the bus bandwidth (LL128 and Simple; LL pipelines per 8-byte line). The one
// constant of the ramp (≈ 24 channels × 128 KiB chunks), set once for all algorithms and GPUs and
// checked against both published nccl-tests sweeps (tests/collective).
inline constexpr double kPipelineBytes = 3.0 * 1024 * 1024;
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

}  // namespace moesim::collective::nccl
