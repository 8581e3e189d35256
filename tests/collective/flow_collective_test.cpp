// Collectives as flows on the topology against the closed form (idle fabric), and where they must
// differ: two collectives sharing links, and a skewed all-to-all paced by its hottest link.
#include <doctest/doctest.h>

#include <numeric>

#include "collective/algorithms.hpp"
#include "collective/flow_collective.hpp"
#include "config/hw_loader.hpp"
#include "hw/topology.hpp"

using namespace moesim;
using collective::Algorithm;
using collective::Op;

namespace {
std::vector<std::int32_t> first(std::int32_t n) {
  std::vector<std::int32_t> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}
double simulate_one(const hw::Topology& t, const hw::SystemSpec& s, Op op, double bytes, std::vector<std::int32_t> ranks,
                    Algorithm a) {
  collective::CollectiveRequest r;
  r.op = op;
  r.bytes = Bytes(bytes);
  r.ranks = std::move(ranks);
  r.algorithm = a;
  return collective::simulate_collectives(t, s, {r}).at(0).time.value();
}
}  // namespace

TEST_CASE("a lone collective on an idle fabric: flows agree with the closed form within 2 %") {
  struct Case {
    const char* system;
    std::int32_t gpus;
    Op op;
    Algorithm algo;
    double bytes;
  };
  const Case cases[] = {
      {"hgx-h100", 8, Op::kAllReduce, Algorithm::kRing, 1 << 30},
      {"hgx-h100", 8, Op::kAllReduce, Algorithm::kNvls, 1 << 30},
      {"hgx-h100", 16, Op::kAllReduce, Algorithm::kRing, 1 << 30},
      {"hgx-h100", 64, Op::kAllGather, Algorithm::kRing, 1 << 30},
      {"hgx-h100", 64, Op::kReduceScatter, Algorithm::kRing, 256 << 20},
      {"hgx-h100", 16, Op::kAllToAll, Algorithm::kDirect, 1 << 30},
      {"dgx-a100", 8, Op::kAllReduce, Algorithm::kRing, 64 << 20},
      {"gb200-nvl72", 72, Op::kAllToAll, Algorithm::kDirect, 1 << 30},
  };
  for (const auto& c : cases) {
    CAPTURE(c.system);
    CAPTURE(c.gpus);
    CAPTURE(std::string(collective::to_string(c.op)));
    const auto sys = config::load_system_preset(c.system, c.gpus);
    const auto topo = hw::build_topology(sys);
    const auto g = collective::place_group(sys, c.gpus, 1);
    const double closed = collective::algorithm_cost(sys, c.op, Bytes(c.bytes), g, c.algo).time.value();
    const double flows = simulate_one(topo, sys, c.op, c.bytes, first(c.gpus), c.algo);
    CHECK(flows == doctest::Approx(closed).epsilon(0.02));
  }
}

TEST_CASE("two all-reduces on the same GPUs share the NVLink links and take twice the transfer time") {
  const auto sys = config::load_system_preset("hgx-h100", 8);
  const auto topo = hw::build_topology(sys);
  const double bytes = 1 << 30;
  collective::CollectiveRequest a;
  a.op = Op::kAllReduce;
  a.bytes = Bytes(bytes);
  a.ranks = first(8);
  a.algorithm = Algorithm::kRing;
  const auto both = collective::simulate_collectives(topo, sys, {a, a});
  // Hand computation: each ring edge carries 2·7/8·(S + fill) bytes; with two rings the GPU→switch
  // link of every GPU carries two such flows at 450 GB/s × 0.822 shared fairly, so both finish at
  // latency + 2 × that volume / capacity. fill = min(S, 8 × 3 MiB).
  const double fill = 8.0 * 3 * 1024 * 1024;
  const double volume = 2.0 * 7.0 / 8.0 * (bytes + fill);
  const double capacity = sys.gpu.nvlink_bandwidth.value() * sys.nvlink_efficiency;
  const double latency = 10e-6 + 8.4e-6 + 14 * sys.nvlink_latency.value();
  const double expected = latency + 2.0 * volume / capacity;
  CHECK(both[0].time.value() == doctest::Approx(expected).epsilon(1e-3));
  CHECK(both[1].time.value() == doctest::Approx(expected).epsilon(1e-3));
  const double alone = simulate_one(topo, sys, Op::kAllReduce, bytes, first(8), Algorithm::kRing);
  CHECK(both[0].time.value() > 1.9 * (alone - latency));
}

TEST_CASE("a skewed all-to-all (one hot destination) is paced by the hot GPU's incoming links") {
  const auto sys = config::load_system_preset("hgx-h100", 16);
  const auto topo = hw::build_topology(sys);
  const std::size_t n = 16;
  const double per_peer = 64.0 * 1024 * 1024;
  std::vector<std::vector<double>> balanced(n, std::vector<double>(n, per_peer));
  // Same total bytes, but every rank sends half of its volume to rank 0 and spreads the rest.
  std::vector<std::vector<double>> hot(n, std::vector<double>(n, 0.0));
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i != j) total += per_peer;
    }
  }
  for (std::size_t i = 1; i < n; ++i) {
    const double row = per_peer * static_cast<double>(n - 1);
    hot[i][0] = row / 2;
    for (std::size_t j = 1; j < n; ++j) {
      if (j != i) hot[i][j] = row / 2 / static_cast<double>(n - 2);
    }
  }
  for (std::size_t j = 1; j < n; ++j) hot[0][j] = per_peer;
  double hot_total = 0;
  for (const auto& row : hot) hot_total += std::accumulate(row.begin(), row.end(), 0.0);
  CHECK(hot_total == doctest::Approx(total).epsilon(1e-12));

  auto run = [&](const std::vector<std::vector<double>>& m) {
    collective::CollectiveRequest r;
    r.op = Op::kAllToAll;
    r.bytes = Bytes(per_peer * static_cast<double>(n));
    r.ranks = first(16);
    r.algorithm = Algorithm::kDirect;
    r.matrix = m;
    return collective::simulate_collectives(topo, sys, {r}).at(0).time.value();
  };
  const double t_bal = run(balanced);
  const double t_hot = run(hot);
  CHECK(t_hot > 2.0 * t_bal);
  // Bottleneck: the 8 senders of the other node reach GPU 0 through its NIC (rail 0, PXN on the
  // sending side), 50 GB/s × network efficiency: 8 × row/2 bytes. The 7 senders of node 0 use
  // GPU 0's NVLink down-link, which is faster; so the NIC sets the time.
  const double row = per_peer * static_cast<double>(n - 1);
  const double nic = sys.network_bandwidth_per_gpu().value() * sys.network_efficiency;
  const double expected = sys.network_latency.value() + 8.0 * (row / 2) / nic;
  CHECK(t_hot == doctest::Approx(expected).epsilon(0.01));
}
