#include <doctest/doctest.h>

#include "collective/closed_form.hpp"
#include "config/hw_loader.hpp"

using namespace moesim;
using collective::Op;

TEST_CASE("nccl-tests busbw factors") {
  CHECK(collective::busbw_factor(Op::kAllReduce, 8) == doctest::Approx(1.75));
  CHECK(collective::busbw_factor(Op::kAllGather, 8) == doctest::Approx(0.875));
  CHECK(collective::busbw_factor(Op::kAllToAll, 4) == doctest::Approx(0.75));
  CHECK(collective::busbw_factor(Op::kSendRecv, 2) == 1.0);
}

TEST_CASE("large all-reduce inside a node runs at the NVLink bus bandwidth") {
  const auto sys = config::load_system_preset("hgx-h100", 8);
  const auto g = collective::place_group(sys, 8, 1);
  CHECK_FALSE(g.crosses_domains());
  const double bytes = 8.0 * 1024 * 1024 * 1024;
  const double t = collective::collective_time(sys, Op::kAllReduce, Bytes(bytes), g).value();
  const double busbw = bytes / t * collective::busbw_factor(Op::kAllReduce, 8);
  CHECK(busbw == doctest::Approx(collective::ring_bus_bandwidth(sys, g).value()).epsilon(0.01));
  CHECK(busbw == doctest::Approx(sys.gpu.nvlink_bandwidth.value() * sys.nvlink_efficiency).epsilon(0.01));
}

TEST_CASE("groups spread over nodes are bound by the NICs their members drive") {
  const auto sys = config::load_system_preset("hgx-h100", 64);
  // DP group of 8 with stride 8 (TP = 8): one member per node, one NIC carries the ring.
  const auto sparse = collective::place_group(sys, 8, 8);
  CHECK(sparse.per_domain == 1);
  CHECK(sparse.domains() == 8);
  // DP group of 64 with stride 1: 8 members per node drive 8 NICs.
  const auto dense = collective::place_group(sys, 64, 1);
  CHECK(dense.per_domain == 8);
  const double nic = sys.network_bandwidth_per_gpu().value() * sys.network_efficiency;
  CHECK(collective::ring_bus_bandwidth(sys, sparse).value() == doctest::Approx(nic));
  CHECK(collective::ring_bus_bandwidth(sys, dense).value() ==
        doctest::Approx(std::min(8 * nic, sys.gpu.nvlink_bandwidth.value() * sys.nvlink_efficiency)));
  // An all-to-all over 16 GPUs on two nodes sends half its bytes over the network.
  const auto ep = collective::place_group(sys, 16, 1);
  const double bytes = 1e9;
  const double t = collective::collective_time(sys, Op::kAllToAll, Bytes(bytes), ep).value();
  CHECK(t == doctest::Approx(sys.network_latency.value() + bytes * 8.0 / 16.0 / nic));
}
