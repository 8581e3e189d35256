// Collectives as flows on the topology against the closed form (idle fabric), and where they must
// differ: two collectives sharing links, and a skewed all-to-all paced by its hottest link.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "collective/algorithms.hpp"
#include "collective/flow_collective.hpp"
#include "collective/nccl_constants.hpp"
#include "core/error.hpp"
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
// Relative comparison: doctest's Approx adds an absolute scale of 1, which would let any two
// millisecond times match.
doctest::Approx rel(double expected, double epsilon) { return doctest::Approx(expected).epsilon(epsilon).scale(0); }
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
      {"hgx-h100", 16, Op::kAllReduce, Algorithm::kTree, 1 << 30},
      {"hgx-h100", 64, Op::kAllReduce, Algorithm::kTree, 1 << 30},
      {"dgx-a100", 32, Op::kAllReduce, Algorithm::kTree, 256 << 20},
      {"hgx-h100", 16, Op::kAllToAll, Algorithm::kHierarchical, 1 << 30},
      {"hgx-h100", 64, Op::kAllToAll, Algorithm::kHierarchical, 1 << 30},
      {"hgx-h100", 64, Op::kAllToAll, Algorithm::kHierarchical, 64 << 10},
      {"hgx-h100", 64, Op::kAllToAll, Algorithm::kDirect, 64 << 10},
      {"gb200-nvl72", 144, Op::kAllToAll, Algorithm::kHierarchical, 1 << 30},
  };
  for (const auto& c : cases) {
    CAPTURE(c.system);
    CAPTURE(c.gpus);
    CAPTURE(std::string(collective::to_string(c.op)));
    CAPTURE(std::string(collective::to_string(c.algo)));
    CAPTURE(c.bytes);
    const auto sys = config::load_system_preset(c.system, c.gpus);
    const auto topo = hw::build_topology(sys);
    const auto g = collective::place_group(sys, c.gpus, 1);
    const double closed = collective::algorithm_cost(sys, c.op, Bytes(c.bytes), g, c.algo).time.value();
    const double flows = simulate_one(topo, sys, c.op, c.bytes, first(c.gpus), c.algo);
    std::printf("  %-12s %4d %-14s %-12s %12.0f B  closed %10.2f us  flows %10.2f us  %+5.2f%%\n", c.system, c.gpus,
                std::string(collective::to_string(c.op)).c_str(), std::string(collective::to_string(c.algo)).c_str(), c.bytes,
                closed * 1e6, flows * 1e6, 100 * (flows - closed) / closed);
    CHECK(flows == rel(closed, 0.02));
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
  // latency + 2 × that volume / capacity. fill = S·cap / (S + cap), cap = 8 hops × 3 MiB.
  const double cap = 8.0 * 3 * 1024 * 1024;
  const double fill = bytes * cap / (bytes + cap);
  const double volume = 2.0 * 7.0 / 8.0 * (bytes + fill);
  const double capacity = sys.gpu.nvlink_bandwidth.value() * sys.nvlink_efficiency;
  const double latency = 10e-6 + 8.4e-6 + 14 * sys.nvlink_latency.value();
  const double expected = latency + 2.0 * volume / capacity;
  CHECK(both[0].time.value() == rel(expected, 1e-3));
  CHECK(both[1].time.value() == rel(expected, 1e-3));
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
  CHECK(hot_total == rel(total, 1e-12));

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
  CHECK(t_hot == rel(expected, 0.01));
}

TEST_CASE("pipeline fill: about the message for small ones, the pipeline's capacity for large ones") {
  using collective::nccl::pipeline_fill_bytes;
  const double cap = 8 * collective::nccl::kPipelineBytes;
  CHECK(pipeline_fill_bytes(0, 8) == 0);
  CHECK(pipeline_fill_bytes(1024, 8) == rel(1024, 1e-3));
  CHECK(pipeline_fill_bytes(cap, 8) == doctest::Approx(cap / 2));
  CHECK(pipeline_fill_bytes(1e12, 8) == rel(cap, 1e-4));
  CHECK(pipeline_fill_bytes(64e6, 8) < pipeline_fill_bytes(128e6, 8));
}

TEST_CASE("double binary tree: every node is inner in at most one tree, so a NIC carries at most 2 edges' worth") {
  CHECK(collective::double_binary_tree_max_degree(1) == 0);
  CHECK(collective::double_binary_tree_max_degree(2) == 2);  // both trees use the one edge
  CHECK(collective::double_binary_tree_max_degree(3) == 3);  // root of one tree (2) + leaf of the other
  CHECK(collective::double_binary_tree_max_degree(4) == 3);
  for (std::int64_t n : {3, 4, 5, 8, 16, 33}) {
    CAPTURE(n);
    if (n >= 5) CHECK(collective::double_binary_tree_max_degree(n) == 4);  // inner (3) + leaf (1)
    for (bool mirrored : {false, true}) {
      const auto parent = collective::binary_tree_parents(n, mirrored);
      CHECK(std::count(parent.begin(), parent.end(), -1) == 1);
    }
  }
}

TEST_CASE("tree all-reduce as flows: the busier tier sets the time, and tree is refused where it does not apply") {
  // 8 HGX H100 nodes, 64 GPUs: NVLink carries 2·7/8 of the data per GPU at 370 GB/s; the busiest NIC
  // (inner node of one tree, leaf of the other: 4 edges) 4/2 × 1/8 of it at 47 GB/s — the network
  // binds (0.25 / 47 > 1.75 / 370), both at NCCL's 0.85 tree share. Latency: 7 chain steps and
  // log2(8) = 3 tree levels, up and down.
  const auto sys = config::load_system_preset("hgx-h100", 64);
  const auto topo = hw::build_topology(sys);
  const double bytes = 1 << 30;
  const double fill = collective::nccl::pipeline_fill_bytes(bytes, 64);
  const double nic = sys.network_bandwidth_per_gpu().value() * sys.network_efficiency;
  const double latency = 10e-6 + 8.4e-6 + 2.0 * (7 * 4.0e-6 + 3 * 14e-6);
  const double expected = latency + 0.25 * (bytes + fill) / (0.85 * nic);
  CHECK(simulate_one(topo, sys, Op::kAllReduce, bytes, first(64), Algorithm::kTree) == rel(expected, 0.01));
  CHECK_THROWS_AS(simulate_one(topo, sys, Op::kAllGather, bytes, first(64), Algorithm::kTree), InputError);
  CHECK_THROWS_AS(simulate_one(topo, sys, Op::kAllToAll, bytes, first(64), Algorithm::kRing), InputError);
}

TEST_CASE("hierarchical all-to-all beats direct on a multi-node HGX fabric for small messages, not for large ones") {
  // 8 HGX H100 nodes. Direct: each proxy posts n − k = 56 network messages (PXN: all local GPUs'
  // messages to its rail), at 3 µs each (tuning.cc network post overhead, Simple). Hierarchical
  // aggregates them to N − 1 = 7 per proxy and pays one NVLink phase (3.4 µs plus 7/8 of the data at
  // 370 GB/s) before the network phase. Small messages are latency-bound: hierarchical saves
  // 49 posts (147 µs) less the NVLink phase. Large ones are bandwidth-bound: both move 7/8 of the
  // data over the NICs, and hierarchical adds the NVLink pass in series.
  const auto sys = config::load_system_preset("hgx-h100", 64);
  const auto topo = hw::build_topology(sys);
  const auto g = collective::place_group(sys, 64, 1);
  auto both = [&](double bytes) {
    const double direct = collective::algorithm_cost(sys, Op::kAllToAll, Bytes(bytes), g, Algorithm::kDirect).time.value();
    const double hier = collective::algorithm_cost(sys, Op::kAllToAll, Bytes(bytes), g, Algorithm::kHierarchical).time.value();
    return std::pair{direct, hier};
  };
  const double nvlink = sys.gpu.nvlink_bandwidth.value() * sys.nvlink_efficiency;
  const double nic = sys.network_bandwidth_per_gpu().value() * sys.network_efficiency;
  const auto [d_small, h_small] = both(64 << 10);
  const double saved = 49 * 3e-6 - sys.nvlink_latency.value() - 7.0 / 8.0 * (64 << 10) / nvlink;
  CHECK(h_small < d_small);
  CHECK(d_small - h_small == rel(saved, 0.05));
  CHECK(collective::best_collective(sys, Op::kAllToAll, Bytes(64 << 10), g).algorithm == Algorithm::kHierarchical);
  const auto [d_large, h_large] = both(1 << 30);
  CHECK(d_large < h_large);
  CHECK(d_large == rel(sys.network_latency.value() + 56 * 3e-6 + 7.0 / 8.0 * (1 << 30) / nic, 1e-3));
  CHECK(collective::best_collective(sys, Op::kAllToAll, Bytes(1 << 30), g).algorithm == Algorithm::kDirect);
  // The flows agree on the ordering at both ends.
  CHECK(simulate_one(topo, sys, Op::kAllToAll, 64 << 10, first(64), Algorithm::kHierarchical) <
        simulate_one(topo, sys, Op::kAllToAll, 64 << 10, first(64), Algorithm::kDirect));
}

TEST_CASE("hierarchical all-to-all with a byte matrix: aggregated messages, same bytes delivered") {
  // 2 HGX nodes; rank 0 sends 100 MB to rank 9 only (rail 1 of node 1). Hierarchical hands it to
  // rank 1 (rail 1 of node 0) over NVLink, then rank 1 sends it over rail 1: NVLink + network in series.
  const auto sys = config::load_system_preset("hgx-h100", 16);
  const auto topo = hw::build_topology(sys);
  std::vector<std::vector<double>> m(16, std::vector<double>(16, 0.0));
  m[0][9] = 100e6;
  collective::CollectiveRequest r;
  r.op = Op::kAllToAll;
  r.bytes = Bytes(100e6);
  r.ranks = first(16);
  r.algorithm = Algorithm::kHierarchical;
  r.matrix = m;
  const auto out = collective::simulate_collectives(topo, sys, {r}).at(0);
  CHECK(out.flows == 2);
  const double nvlink = sys.gpu.nvlink_bandwidth.value() * sys.nvlink_efficiency;
  const double nic = sys.network_bandwidth_per_gpu().value() * sys.network_efficiency;
  const double expected = sys.nvlink_latency.value() + 100e6 / nvlink + sys.network_latency.value() + 3e-6 + 100e6 / nic;
  CHECK(out.time.value() == rel(expected, 1e-3));
  r.matrix.assign(3, std::vector<double>(3, 1.0));
  CHECK_THROWS_AS((void)collective::simulate_collectives(topo, sys, {r}), InputError);
}
