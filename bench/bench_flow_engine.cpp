// Flow engine speed: an all-to-all with a skewed (log-normal, σ = 1) traffic matrix on a
// rail-optimized H100-like fabric, every ordered pair of distinct GPUs one flow, max-min fair
// sharing. Targets (issue 3), one core: 1,024 GPUs (1,047,552 flows) in <= 10 s and <= 2 GiB peak
// RSS; 64 GPUs (4,032 flows) in <= 20 ms.
// Usage: build/bench/bench_flow_engine [tolerance=2e-2] [repeats_64=20] [gpus_large=1024]
//   (results go to docs/performance.md)
//
// The fabric is built here, not by hw/ (the engine knows links, not GPUs): per node 8 GPUs, each
// with an NVLink up/down link to the NVSwitch (450 GB/s each way) and a NIC up/down link to the
// leaf of its rail (400 Gb/s = 50 GB/s each way). Rail r of every node goes to the rail-r leaves;
// a leaf serves up to 32 nodes and, when a rail has several leaves, reaches 4 rail-r spines with
// uplinks summing to its downlinks (non-blocking). Inter-node flows use PXN: NVLink to the GPU on
// the destination's rail, then that GPU's NIC, leaf, spine (hash of the pair), leaf, NIC.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "engine/flow_network.hpp"

using namespace moesim;
using namespace moesim::engine;

namespace {

constexpr int kGpusPerNode = 8;
constexpr int kNodesPerLeaf = 32;
constexpr int kSpinesPerRail = 4;
constexpr double kNvlinkBytesPerS = 450e9;  // H100 NVLink 4: 900 GB/s bidirectional
constexpr double kNicBytesPerS = 50e9;      // ConnectX-7 NDR 400 Gb/s
constexpr SimTime kNvlinkLatency = 1'000'000;   // 1 us, a plausible NVLink p2p start-up
constexpr SimTime kNetworkLatency = 4'000'000;  // 4 us, a plausible IB RDMA start-up
constexpr double kBaseBytes = 256.0 * 1024;     // mean bytes per (src, dst) pair
constexpr double kSigma = 1.0;

class RailFabric {
 public:
  explicit RailFabric(int nodes) : gpus_(nodes * kGpusPerNode) {
    leaves_per_rail_ = (nodes + kNodesPerLeaf - 1) / kNodesPerLeaf;
    nodes_per_leaf_ = std::min(nodes, kNodesPerLeaf);
    links_.assign(static_cast<std::size_t>(gpus_) * 2, LinkCapacity{kNvlinkBytesPerS});
    links_.resize(static_cast<std::size_t>(gpus_) * 4, LinkCapacity{kNicBytesPerS});
    if (leaves_per_rail_ > 1) {
      const double uplink = nodes_per_leaf_ * kNicBytesPerS / kSpinesPerRail;
      const std::size_t fabric_links =
          static_cast<std::size_t>(kGpusPerNode) * static_cast<std::size_t>(leaves_per_rail_) * kSpinesPerRail * 2;
      links_.resize(links_.size() + fabric_links, LinkCapacity{uplink});
    }
  }

  [[nodiscard]] const std::vector<LinkCapacity>& links() const { return links_; }
  [[nodiscard]] int gpus() const { return gpus_; }

  /// Appends the links from GPU `src` to GPU `dst` to `path` (cleared first).
  void route(int src, int dst, std::vector<LinkId>& path) const {
    path.clear();
    const int src_node = src / kGpusPerNode, dst_node = dst / kGpusPerNode;
    if (src_node == dst_node) {
      path.push_back(nvlink_up(src));
      path.push_back(nvlink_down(dst));
      return;
    }
    const int rail = dst % kGpusPerNode;
    const int via = src_node * kGpusPerNode + rail;  // PXN: leave the node on the destination's rail
    if (via != src) {
      path.push_back(nvlink_up(src));
      path.push_back(nvlink_down(via));
    }
    path.push_back(nic_up(via));
    const int src_leaf = src_node / kNodesPerLeaf, dst_leaf = dst_node / kNodesPerLeaf;
    if (src_leaf != dst_leaf) {
      const int spine = static_cast<int>(mix(static_cast<std::uint64_t>(src) * 65536 + static_cast<std::uint64_t>(dst)) %
                                         kSpinesPerRail);
      path.push_back(leaf_to_spine(rail, src_leaf, spine));
      path.push_back(spine_to_leaf(rail, spine, dst_leaf));
    }
    path.push_back(nic_down(dst));
  }

 private:
  static std::uint64_t mix(std::uint64_t x) {  // a fixed hash, as ECMP would use
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
  }
  [[nodiscard]] LinkId nvlink_up(int g) const { return g; }
  [[nodiscard]] LinkId nvlink_down(int g) const { return gpus_ + g; }
  [[nodiscard]] LinkId nic_up(int g) const { return 2 * gpus_ + g; }
  [[nodiscard]] LinkId nic_down(int g) const { return 3 * gpus_ + g; }
  [[nodiscard]] LinkId leaf_to_spine(int rail, int leaf, int spine) const {
    return 4 * gpus_ + ((rail * leaves_per_rail_ + leaf) * kSpinesPerRail + spine) * 2;
  }
  [[nodiscard]] LinkId spine_to_leaf(int rail, int spine, int leaf) const {
    return 4 * gpus_ + ((rail * leaves_per_rail_ + leaf) * kSpinesPerRail + spine) * 2 + 1;
  }

  int gpus_, leaves_per_rail_ = 1, nodes_per_leaf_ = 1;
  std::vector<LinkCapacity> links_;
};

/// bytes(i, j) = base · exp(σ·z − σ²/2), z standard normal: mean `base`, a fixed seed.
std::vector<double> skewed_matrix(int gpus, std::uint64_t seed) {
  RngStream rng(seed, "bench/flow_engine/all_to_all");
  std::vector<double> m(static_cast<std::size_t>(gpus) * static_cast<std::size_t>(gpus), 0.0);
  for (int i = 0; i < gpus; ++i) {
    for (int j = 0; j < gpus; ++j) {
      if (i != j) m[static_cast<std::size_t>(i) * gpus + j] = kBaseBytes * std::exp(kSigma * rng.normal() - kSigma * kSigma / 2);
    }
  }
  return m;
}

struct RunResult {
  double setup_s = 0;  ///< building the requests and adding the flows
  double run_s = 0;    ///< running the events
  std::int64_t flows = 0;
  std::int64_t recomputations = 0;
  std::int64_t partial_recomputations = 0;
  std::int64_t rates_computed = 0;
  std::uint64_t events = 0;
  SimTime finish = 0;
  std::vector<SimTime> completion;  ///< per flow id
  std::vector<SimTime> activation;  ///< per flow id
};

RunResult run_all_to_all(const RailFabric& fabric, const std::vector<double>& matrix, double tolerance) {
  using clock = std::chrono::steady_clock;
  RunResult r;
  const auto t0 = clock::now();
  EventQueue queue;
  FlowNetworkOptions options;
  options.completion_batch_tolerance = tolerance;
  FlowNetwork network(queue, fabric.links(), options);
  const int g = fabric.gpus();
  r.completion.assign(static_cast<std::size_t>(g) * (g - 1), -1);
  r.activation.resize(r.completion.size());
  std::vector<LinkId> path;
  for (int i = 0; i < g; ++i) {
    for (int j = 0; j < g; ++j) {
      if (i == j) continue;
      fabric.route(i, j, path);
      FlowRequest req;
      req.path = path;
      req.bytes = matrix[static_cast<std::size_t>(i) * g + j];
      req.latency = i / kGpusPerNode == j / kGpusPerNode ? kNvlinkLatency : kNetworkLatency;
      const FlowId id = network.add_flow(std::move(req), [&r](FlowId f, SimTime at) {
        r.completion[static_cast<std::size_t>(f)] = at;
      });
      r.activation[static_cast<std::size_t>(id)] = i / kGpusPerNode == j / kGpusPerNode ? kNvlinkLatency : kNetworkLatency;
    }
  }
  const auto t1 = clock::now();
  queue.run();
  const auto t2 = clock::now();
  r.setup_s = std::chrono::duration<double>(t1 - t0).count();
  r.run_s = std::chrono::duration<double>(t2 - t1).count();
  r.flows = static_cast<std::int64_t>(r.completion.size());
  r.recomputations = network.rate_recomputations();
  r.partial_recomputations = network.partial_rate_recomputations();
  r.rates_computed = network.rates_computed();
  r.events = queue.events_run();
  for (const SimTime c : r.completion) {
    if (c < 0) {
      std::fprintf(stderr, "a flow never completed\n");
      std::exit(1);
    }
    r.finish = std::max(r.finish, c);
  }
  return r;
}

/// |t - t_exact| / (t_exact - activation) per flow: the batching error relative to each flow's
/// own duration.
std::vector<double> relative_errors(const RunResult& approx, const RunResult& exact) {
  std::vector<double> e;
  for (std::size_t f = 0; f < exact.completion.size(); ++f) {
    const double d = static_cast<double>(exact.completion[f] - exact.activation[f]);
    e.push_back(std::abs(static_cast<double>(approx.completion[f] - exact.completion[f])) / d);
  }
  std::sort(e.begin(), e.end());
  return e;
}

double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;  // kB
  }
  return -1;
}

void print(const char* label, const RunResult& r) {
  const double wall = r.setup_s + r.run_s;
  std::printf("%s: %lld flows, wall %.3f s (setup %.3f s, run %.3f s), %lld rate recomputations (%lld partial, "
              "%.1f M flow rates set), %llu events (%.0f events/s), simulated completion %.3f us\n",
              label, static_cast<long long>(r.flows), wall, r.setup_s, r.run_s, static_cast<long long>(r.recomputations),
              static_cast<long long>(r.partial_recomputations), static_cast<double>(r.rates_computed) / 1e6,
              static_cast<unsigned long long>(r.events),
              static_cast<double>(r.events) / wall, static_cast<double>(r.finish) / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const double tolerance = argc > 1 ? std::atof(argv[1]) : 2e-2;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 20;
  const int large_gpus = argc > 3 ? std::atoi(argv[3]) : 1024;
  std::printf("bench_flow_engine: all-to-all, log-normal(sigma=1) matrix, mean %.0f KiB per pair, "
              "rail-optimized fabric, completion_batch_tolerance %g\n",
              kBaseBytes / 1024, tolerance);

  {
    const RailFabric fabric(64 / kGpusPerNode);
    const auto matrix = skewed_matrix(fabric.gpus(), 42);
    const RunResult exact = run_all_to_all(fabric, matrix, 0.0);
    print("  64 GPUs, tolerance 0 (exact)", exact);
    double total = 0, best = 1e30;
    RunResult last;
    for (int i = 0; i < repeats; ++i) {
      last = run_all_to_all(fabric, matrix, tolerance);
      total += last.setup_s + last.run_s;
      best = std::min(best, last.setup_s + last.run_s);
    }
    print("  64 GPUs", last);
    const auto err = relative_errors(last, exact);
    std::printf("  64 GPUs: mean wall over %d runs %.2f ms (best %.2f ms)\n", repeats, 1e3 * total / repeats, 1e3 * best);
    std::printf("  64 GPUs: error vs exact, per flow (of its duration): median %.2g, p99 %.2g, max %.2g; "
                "all-to-all end %.2g\n",
                err[err.size() / 2], err[err.size() * 99 / 100], err.back(),
                std::abs(static_cast<double>(last.finish - exact.finish)) / static_cast<double>(exact.finish));
  }
  {
    const RailFabric fabric(large_gpus / kGpusPerNode);
    const auto matrix = skewed_matrix(fabric.gpus(), 42);
    const RunResult r = run_all_to_all(fabric, matrix, tolerance);
    char label[64];
    std::snprintf(label, sizeof label, "  %d GPUs", fabric.gpus());
    print(label, r);
  }
  std::printf("  peak RSS (VmHWM) %.0f MiB\n", peak_rss_mib());
  return 0;
}
