// NCCL collectives, nccl-tests style, from one process driving every GPU in use (one communicator
// per GPU from ncclCommInitAll, calls grouped with ncclGroupStart/End): all_reduce, all_gather,
// reduce_scatter, all_to_all (grouped ncclSend/ncclRecv) and send_recv (ring shift), float32 sum,
// sizes and bus bandwidth as nccl-tests' doc/PERFORMANCE.md defines them. Each op is checked once
// per group on chunk-tagged data before it is timed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nccl.h>

#include "calibrate/measure.hpp"
#include "calibrate/measure_internal.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/nccl_check.hpp"
#include "kernels/reference/stats.hpp"

namespace moesim::calibrate {
namespace {

// The profile's collectives, in its order (hw/profile.hpp names them).
using Op = hw::ProfileCollectiveOp;
constexpr Op kOps[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kAllToAll, Op::kSendRecv};

// busbw = algbw x factor: the bytes each rank's busiest link carries per byte of "size".
double bus_factor(Op op, int n) {
  switch (op) {
    case Op::kAllReduce: return 2.0 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: return static_cast<double>(n - 1) / n;
    case Op::kSendRecv: return 1.0;
  }
  return 0;
}

// Floats per rank chunk for a collective of `bytes`: all_reduce and send_recv move the whole
// buffer, the others split it into n chunks (rounded down, as nccl-tests does).
std::size_t chunk_floats(Op op, std::size_t bytes, int n) {
  const std::size_t floats = bytes / sizeof(float);
  return (op == Op::kAllReduce || op == Op::kSendRecv) ? floats : floats / static_cast<std::size_t>(n);
}

std::size_t effective_bytes(Op op, std::size_t chunk, int n) {
  return (op == Op::kAllReduce || op == Op::kSendRecv) ? chunk * sizeof(float) : chunk * static_cast<std::size_t>(n) * sizeof(float);
}

// The communicators, streams, events and buffers of one group of ranks (GPUs 0..n-1).
class Group {
 public:
  Group(int n, std::size_t max_bytes) : n_(n), comms_(static_cast<std::size_t>(n)) {
    std::vector<int> devices(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) devices[static_cast<std::size_t>(r)] = r;
    MOESIM_NCCL_CHECK(ncclCommInitAll(comms_.data(), n, devices.data()));
    for (int r = 0; r < n; ++r) {
      MOESIM_CUDA_CHECK(cudaSetDevice(r));
      Rank rank;
      MOESIM_CUDA_CHECK(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
      MOESIM_CUDA_CHECK(cudaEventCreate(&rank.start));
      MOESIM_CUDA_CHECK(cudaEventCreate(&rank.stop));
      MOESIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&rank.send), max_bytes));
      MOESIM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&rank.recv), max_bytes));
      ranks_.push_back(rank);
    }
    MOESIM_CUDA_CHECK(cudaSetDevice(0));
  }
  ~Group() {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      (void)cudaSetDevice(static_cast<int>(r));
      (void)cudaStreamSynchronize(ranks_[r].stream);
      (void)ncclCommDestroy(comms_[r]);
      (void)cudaStreamDestroy(ranks_[r].stream);
      (void)cudaEventDestroy(ranks_[r].start);
      (void)cudaEventDestroy(ranks_[r].stop);
      (void)cudaFree(ranks_[r].send);
      (void)cudaFree(ranks_[r].recv);
    }
    (void)cudaSetDevice(0);
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  void launch(Op op, std::size_t chunk) {
    MOESIM_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < n_; ++r) {
      const auto rr = static_cast<std::size_t>(r);
      Rank& k = ranks_[rr];
      ncclComm_t comm = comms_[rr];
      switch (op) {
        case Op::kAllReduce: MOESIM_NCCL_CHECK(ncclAllReduce(k.send, k.recv, chunk, ncclFloat, ncclSum, comm, k.stream)); break;
        case Op::kAllGather: MOESIM_NCCL_CHECK(ncclAllGather(k.send, k.recv, chunk, ncclFloat, comm, k.stream)); break;
        case Op::kReduceScatter: MOESIM_NCCL_CHECK(ncclReduceScatter(k.send, k.recv, chunk, ncclFloat, ncclSum, comm, k.stream)); break;
        case Op::kAllToAll:
          for (int p = 0; p < n_; ++p) {
            const std::size_t off = static_cast<std::size_t>(p) * chunk;
            MOESIM_NCCL_CHECK(ncclSend(k.send + off, chunk, ncclFloat, p, comm, k.stream));
            MOESIM_NCCL_CHECK(ncclRecv(k.recv + off, chunk, ncclFloat, p, comm, k.stream));
          }
          break;
        case Op::kSendRecv:
          MOESIM_NCCL_CHECK(ncclSend(k.send, chunk, ncclFloat, (r + 1) % n_, comm, k.stream));
          MOESIM_NCCL_CHECK(ncclRecv(k.recv, chunk, ncclFloat, (r - 1 + n_) % n_, comm, k.stream));
          break;
      }
    }
    MOESIM_NCCL_CHECK(ncclGroupEnd());
  }

  /// Microseconds per call of `batch` back-to-back calls: the slowest rank's, between events on
  /// each rank's stream.
  double time(Op op, std::size_t chunk, int batch) {
    for (int r = 0; r < n_; ++r) {
      MOESIM_CUDA_CHECK(cudaSetDevice(r));
      MOESIM_CUDA_CHECK(cudaEventRecord(ranks_[static_cast<std::size_t>(r)].start, ranks_[static_cast<std::size_t>(r)].stream));
    }
    for (int b = 0; b < batch; ++b) launch(op, chunk);
    double worst = 0;
    for (int r = 0; r < n_; ++r) {
      Rank& k = ranks_[static_cast<std::size_t>(r)];
      MOESIM_CUDA_CHECK(cudaSetDevice(r));
      MOESIM_CUDA_CHECK(cudaEventRecord(k.stop, k.stream));
    }
    for (int r = 0; r < n_; ++r) {
      Rank& k = ranks_[static_cast<std::size_t>(r)];
      MOESIM_CUDA_CHECK(cudaSetDevice(r));
      MOESIM_CUDA_CHECK(cudaEventSynchronize(k.stop));
      float ms = 0;
      MOESIM_CUDA_CHECK(cudaEventElapsedTime(&ms, k.start, k.stop));
      worst = std::max(worst, static_cast<double>(ms) * 1e3);
    }
    MOESIM_CUDA_CHECK(cudaSetDevice(0));
    return worst / batch;
  }

  // Rank r's send element i = (r + 1) * 1000 + i / chunk: the rank and the chunk are both visible
  // in every received value, so a misplaced chunk or a wrong peer fails the check.
  void check(Op op, std::size_t chunk) {
    const std::size_t floats = op == Op::kAllReduce || op == Op::kSendRecv ? chunk : chunk * static_cast<std::size_t>(n_);
    const std::size_t tag = op == Op::kAllReduce || op == Op::kSendRecv ? std::max<std::size_t>(chunk / static_cast<std::size_t>(n_), 1) : chunk;
    for (int r = 0; r < n_; ++r) {
      std::vector<float> host(floats);
      for (std::size_t i = 0; i < floats; ++i) host[i] = static_cast<float>((r + 1) * 1000 + static_cast<int>(i / tag));
      MOESIM_CUDA_CHECK(cudaSetDevice(r));
      Rank& k = ranks_[static_cast<std::size_t>(r)];
      MOESIM_CUDA_CHECK(cudaMemcpy(k.send, host.data(), floats * sizeof(float), cudaMemcpyHostToDevice));
      MOESIM_CUDA_CHECK(cudaMemset(k.recv, 0xff, floats * sizeof(float)));  // NaN until written
      MOESIM_CUDA_CHECK(cudaDeviceSynchronize());  // the rank streams are non-blocking: not ordered after the legacy stream
    }
    launch(op, chunk);
    const double ranks_sum = 1000.0 * n_ * (n_ + 1) / 2;
    for (int r = 0; r < n_; ++r) {
      Rank& k = ranks_[static_cast<std::size_t>(r)];
      MOESIM_CUDA_CHECK(cudaSetDevice(r));
      MOESIM_CUDA_CHECK(cudaStreamSynchronize(k.stream));
      const std::size_t received = op == Op::kReduceScatter ? chunk : floats;
      std::vector<float> got(received);
      MOESIM_CUDA_CHECK(cudaMemcpy(got.data(), k.recv, received * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < received; ++i) {
        double want = 0;
        switch (op) {
          case Op::kAllReduce: want = ranks_sum + static_cast<double>(n_) * static_cast<double>(i / tag); break;
          case Op::kAllGather: want = (static_cast<double>(i / chunk) + 1) * 1000; break;  // rank p's chunk 0
          case Op::kReduceScatter: want = ranks_sum + static_cast<double>(n_) * r; break;  // everyone's chunk r
          case Op::kAllToAll: want = (static_cast<double>(i / chunk) + 1) * 1000 + r; break;  // rank p's chunk r
          case Op::kSendRecv: want = ((r - 1 + n_) % n_ + 1) * 1000.0 + static_cast<double>(i / tag); break;
        }
        if (static_cast<double>(got[i]) != want) {
          MOESIM_CUDA_CHECK(cudaSetDevice(0));
          throw std::runtime_error(fmt::format("wrong result: {} over {} ranks: rank {} element {} is {}, expected {}", hw::to_string(op), n_, r, i, got[i], want));
        }
      }
    }
    MOESIM_CUDA_CHECK(cudaSetDevice(0));
  }

 private:
  struct Rank {
    cudaStream_t stream{};
    cudaEvent_t start{}, stop{};
    float* send = nullptr;
    float* recv = nullptr;
  };
  int n_;
  std::vector<ncclComm_t> comms_;
  std::vector<Rank> ranks_;
};

// All GPUs, and the power-of-two groups below (a single GPU: one rank).
std::vector<int> group_sizes(int gpus) {
  if (gpus <= 1) return {1};
  std::vector<int> sizes;
  for (int s = 2; s <= gpus; s *= 2) sizes.push_back(s);
  if (sizes.back() != gpus) sizes.push_back(gpus);
  return sizes;
}

void measure_group(const SweepPlan& plan, Log& log, int n, hw::Profile& profile, std::vector<std::string>& failures) {
  const std::size_t max_bytes = *std::max_element(plan.collective_bytes.begin(), plan.collective_bytes.end());
  Group group(n, max_bytes);
  const Repeats& rep = plan.repeats;
  for (const Op op : kOps) {
    const std::string what = fmt::format("{} over {} ranks", hw::to_string(op), n);
    try {
      // Checked at 1 MiB (or the largest size, if smaller).
      if (const std::size_t c = chunk_floats(op, std::min(std::size_t{1} << 20, max_bytes), n); c > 0) group.check(op, c);
      for (const std::size_t bytes : plan.collective_bytes) {
        const std::size_t chunk = chunk_floats(op, bytes, n);
        if (chunk == 0) continue;
        for (int w = 0; w < rep.warmup; ++w) group.launch(op, chunk);
        const double single = std::max(group.time(op, chunk, 1), 1e-3);
        const int batch = std::clamp(static_cast<int>(std::ceil(100.0 / single)), 1, 20);  // samples of about 100 us
        const int repeats = single > rep.large_call_us ? std::min(rep.repeats, rep.large_repeats) : rep.repeats;
        std::vector<double> samples;
        for (int i = 0; i < repeats; ++i) samples.push_back(group.time(op, chunk, batch));
        const kernels::Summary s = kernels::summarize(samples);
        const std::size_t eff = effective_bytes(op, chunk, n);
        const double algbw = gbps(static_cast<double>(eff), s.median);
        hw::ProfileCollective row{op, n, n, static_cast<std::int64_t>(eff), to_timing(s), algbw, algbw * bus_factor(op, n)};
        log.detail(fmt::format("  {} {:>11} B: {:10.2f} us (spread {:.2f}), algbw {:7.2f} GB/s, busbw {:7.2f} GB/s", what, eff, s.median, s.spread(),
                               row.algbw_gbps, row.busbw_gbps));
        profile.collectives.push_back(row);
      }
    } catch (const std::exception& e) {
      failures.push_back(fmt::format("{}: {}", what, e.what()));
      log.warning(fmt::format("{} not recorded: {}", what, e.what()));
    }
  }
}

}  // namespace

void measure_collectives(const SweepPlan& plan, Log& log, int gpus, hw::Profile& profile, std::vector<std::string>& failures) {
  if (plan.collective_bytes.empty()) return;
  for (const int n : group_sizes(gpus)) {
    log.progress(fmt::format("nccl: {} rank{} (GPUs 0..{}), {} sizes x 5 collectives", n, n == 1 ? "" : "s", n - 1, plan.collective_bytes.size()));
    try {
      measure_group(plan, log, n, profile, failures);
    } catch (const std::exception& e) {
      failures.push_back(fmt::format("nccl over {} ranks: {}", n, e.what()));
      log.warning(fmt::format("nccl over {} ranks not recorded: {}", n, e.what()));
    }
  }
}

}  // namespace moesim::calibrate
