#include <doctest/doctest.h>

#include "collective/cost_model.hpp"
#include "config/hw_loader.hpp"

using namespace moesim;
using collective::Op;
using hw::EpKernelPhase;

// collective::CollectiveCostModel::ep_kernel_time: a DeepEP / HybridEP dispatch or combine at the GPU
// preset's published algorithm bandwidth (deepseek-ai/DeepEP docs/README_Hybrid-EP.md), or the closed
// form where there is none.

TEST_CASE("ep kernel time: the bytes a rank receives over the published rate, plus the latency") {
  const auto sys = config::load_system_preset("dgx-b200", 8);
  const collective::CollectiveCostModel comms(sys, nullptr);
  const auto g = collective::place_group(sys, 8, 1);
  REQUIRE(g.per_domain == 8);
  const Bytes peers(7.0 * 64e6);  // 64 MB for each of the 7 peers
  const double latency = comms.latency(Op::kAllToAll, g).value();
  // HybridEP at 16 SMs on 8 B200: BF16 dispatch 535.94 GB/s, combine 530.86 GB/s of received bytes,
  // the rank's own 64 MB included.
  const double received = 8.0 * 64e6;
  CHECK(comms.ep_kernel_time("hybridep", EpKernelPhase::kDispatchBf16, 16, peers, Bytes(0), g).value() ==
        doctest::Approx(latency + received / 535.94e9).epsilon(1e-12));
  CHECK(comms.ep_kernel_time("hybridep", EpKernelPhase::kCombine, 16, peers, Bytes(0), g).value() ==
        doctest::Approx(latency + received / 530.86e9).epsilon(1e-12));
  // Slower than the link form: 900 GB/s × the NVLink efficiency for the peers' bytes.
  CHECK(comms.ep_kernel_time("hybridep", EpKernelPhase::kCombine, 16, peers, Bytes(0), g).value() >
        comms.alltoall_split_time(peers, Bytes(0), g).value());
}

TEST_CASE("ep kernel time: the closed form where no rate is published or nothing crosses NVLink") {
  const auto b200 = config::load_system_preset("dgx-b200", 8);
  const collective::CollectiveCostModel on_b200(b200, nullptr);
  const auto g = collective::place_group(b200, 8, 1);
  const Bytes peers(7.0 * 64e6);
  // No table for this kernel name.
  CHECK(on_b200.ep_kernel_time("alltoall", EpKernelPhase::kCombine, 16, peers, Bytes(0), g).value() ==
        on_b200.alltoall_split_time(peers, Bytes(0), g).value());
  // A group of one rank per domain has no NVLink peers: only the network part.
  const auto b200_64 = config::load_system_preset("dgx-b200", 64);
  const collective::CollectiveCostModel across(b200_64, nullptr);
  const auto sparse = collective::place_group(b200_64, 8, 8);
  REQUIRE(sparse.per_domain == 1);
  CHECK(across.ep_kernel_time("deepep", EpKernelPhase::kCombine, 20, Bytes(0), Bytes(64e6), sparse).value() ==
        across.alltoall_split_time(Bytes(0), Bytes(64e6), sparse).value());
  // Hopper presets publish no intranode table.
  const auto h100 = config::load_system_preset("hgx-h100", 8);
  const collective::CollectiveCostModel on_h100(h100, nullptr);
  const auto gh = collective::place_group(h100, 8, 1);
  CHECK(on_h100.ep_kernel_time("hybridep", EpKernelPhase::kCombine, 16, peers, Bytes(0), gh).value() ==
        on_h100.alltoall_split_time(peers, Bytes(0), gh).value());
}

TEST_CASE("ep kernel time across nodes: the network bytes over the published RDMA rate of the group's size and SMs") {
  // HGX H100, EP64 over 8 nodes (8 per domain): HybridEP's 'IB bandwidth' and DeepEP's RDMA bottleneck
  // bandwidth (docs/README_Hybrid-EP.md H100 table; docs/legacy.md, H800 with the same NIC).
  const auto sys = config::load_system_preset("hgx-h100", 64);
  const collective::CollectiveCostModel comms(sys, nullptr);
  const auto g = collective::place_group(sys, 64, 1);
  REQUIRE(g.per_domain == 8);
  REQUIRE(g.crosses_domains());
  const Bytes nvlink(7.0 * 8e6), network(56.0 * 8e6);
  const double latency = comms.latency(Op::kAllToAll, g).value();
  const auto at = [&](const char* kernel, EpKernelPhase phase, std::int64_t sms) {
    return comms.ep_kernel_time(kernel, phase, sms, nvlink, network, g).value();
  };
  // HybridEP at 4 SMs, 64 ranks: FP8 dispatch 30.42 GB/s, combine 41.00 GB/s of RDMA bytes sent.
  CHECK(at("hybridep", EpKernelPhase::kDispatchFp8, 4) == doctest::Approx(latency + network.value() / 30.42e9).epsilon(1e-12));
  CHECK(at("hybridep", EpKernelPhase::kCombine, 4) == doctest::Approx(latency + network.value() / 41.00e9).epsilon(1e-12));
  // Between published SM counts, linear: 6 SMs is halfway from 4 (30.42) to 8 (35.71).
  CHECK(at("hybridep", EpKernelPhase::kDispatchFp8, 6) ==
        doctest::Approx(latency + network.value() / 33.065e9).epsilon(1e-12));
  // The SM budget matters: 4 SMs are slower than 8.
  CHECK(at("hybridep", EpKernelPhase::kDispatchFp8, 4) > at("hybridep", EpKernelPhase::kDispatchFp8, 8));
  // DeepEP at EP64: FP8 dispatch 51 GB/s, combine 50 GB/s (its only rows, 24 SMs).
  CHECK(at("deepep", EpKernelPhase::kDispatchFp8, 20) == doctest::Approx(latency + network.value() / 51e9).epsilon(1e-12));
  CHECK(at("deepep", EpKernelPhase::kCombine, 24) == doctest::Approx(latency + network.value() / 50e9).epsilon(1e-12));
  // The published rate replaces the NIC's closed form (47 GB/s: 400 Gb/s × 0.94), faster for DeepEP's
  // 51 GB/s; NCCL's all-to-all has no table and keeps it.
  CHECK(at("deepep", EpKernelPhase::kDispatchFp8, 24) < comms.alltoall_split_time(nvlink, network, g).value());
  CHECK(at("alltoall", EpKernelPhase::kCombine, 24) == comms.alltoall_split_time(nvlink, network, g).value());

  // Twice the NIC bandwidth per GPU (two 400 Gb/s NICs per GPU) doubles the published rate.
  auto doubled = sys;
  doubled.nics_per_gpu = 2;
  const collective::CollectiveCostModel wide(doubled, nullptr);
  CHECK(wide.ep_kernel_time("hybridep", EpKernelPhase::kDispatchFp8, 4, nvlink, network, g).value() ==
        doctest::Approx(wide.latency(Op::kAllToAll, g).value() + network.value() / (2.0 * 30.42e9)).epsilon(1e-12));
}
