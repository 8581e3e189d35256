#include "calibrate/proxy/proxy_run.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nccl.h>

#include "calibrate/proxy/phase_clock.hpp"
#include "calibrate/proxy/proxy_rank.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/nccl_check.hpp"

namespace moesim::proxy {
namespace {

/// Bytes in use on the current device now (total − free: the context, libraries and our buffers).
double device_used_bytes() {
  std::size_t free_bytes = 0, total_bytes = 0;
  MOESIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<double>(total_bytes - free_bytes);
}

/// A communicator group: `members` consecutive-or-strided ranks sharing one unique id.
struct GroupIds {
  std::vector<ncclUniqueId> ids;  ///< one per group
};

/// `groups` ids for groups of `size` ranks; none needed (and no NCCL bootstrap started) for size 1.
GroupIds make_ids(std::int64_t groups, std::int64_t size) {
  GroupIds g;
  g.ids.resize(static_cast<std::size_t>(groups));
  if (size > 1) {
    for (auto& id : g.ids) MOESIM_NCCL_CHECK(ncclGetUniqueId(&id));
  }
  return g;
}

ncclComm_t join(const ncclUniqueId& id, std::int64_t size, std::int64_t rank) {
  if (size <= 1) return nullptr;
  ncclComm_t comm = nullptr;
  MOESIM_NCCL_CHECK(ncclCommInitRank(&comm, static_cast<int>(size), id, static_cast<int>(rank)));
  return comm;
}

}  // namespace

MeasuredRun run_workload(const ValidationWorkload& w, const std::function<void(const std::string&)>& progress) {
  if (w.tp != 1) throw std::invalid_argument("the proxy runner runs TP 1 only; the workload has tp " + std::to_string(w.tp));
  if (w.precision != "bf16") {
    throw std::invalid_argument("the proxy runner runs BF16 GEMMs only so far; the workload asks for " + w.precision);
  }
  const std::int64_t gpus = w.gpus, ep = w.ep, expert_dp = w.gpus / w.ep;
  // EP groups are consecutive ranks; expert-DP groups the ranks with the same EP index.
  const GroupIds ep_ids = make_ids(gpus / ep, ep), dp_ids = make_ids(1, gpus), edp_ids = make_ids(ep, expert_dp);

  MeasuredRun run;
  run.gpus = gpus;
  run.layers = w.layers;
  run.steps = w.steps;
  run.warmup = w.warmup;
  run.gpu = w.gpu;
  std::mutex mutex;
  std::exception_ptr failure;
  std::vector<ncclComm_t> all_comms;

  auto rank_main = [&](std::int64_t rank) {
    RankComms comms;
    try {
      MOESIM_CUDA_CHECK(cudaSetDevice(static_cast<int>(rank)));
      comms.ep = join(ep_ids.ids[static_cast<std::size_t>(rank / ep)], ep, rank % ep);
      comms.dp = join(dp_ids.ids[0], gpus, rank);
      comms.expert_dp = join(edp_ids.ids[static_cast<std::size_t>(rank % ep)], expert_dp, rank / ep);
      {
        std::lock_guard<std::mutex> lock(mutex);
        for (ncclComm_t c : {comms.ep, comms.dp, comms.expert_dp}) {
          if (c != nullptr) all_comms.push_back(c);
        }
      }
      ProxyRank proxy(w, rank, comms);
      std::unique_ptr<PhaseClock> clock = rank == 0 ? std::make_unique<PhaseClock>(proxy.stream()) : nullptr;
      double peak = device_used_bytes(), step_sum = 0;
      std::map<std::string, double> phase_sum;
      for (std::int64_t i = 0; i < w.warmup + w.steps; ++i) {
        const bool timed = i >= w.warmup;
        proxy.step(timed ? clock.get() : nullptr);
        MOESIM_CUDA_CHECK(cudaStreamSynchronize(proxy.stream()));
        peak = std::max(peak, device_used_bytes());
        if (timed && clock) {
          double seconds = 0;
          for (const auto& [phase, s] : clock->end_step(seconds)) phase_sum[phase] += s;
          step_sum += seconds;
          progress(fmt::format("step {}/{}: {:.6f} s", i - w.warmup + 1, w.steps, seconds));
        } else if (rank == 0) {
          progress(fmt::format("warm-up step {}/{}", i + 1, w.warmup));
        }
      }
      if (rank == 0) {
        const double n = static_cast<double>(std::max<std::int64_t>(w.steps, 1));
        run.step_time_s = step_sum / n;
        for (const auto& [phase, s] : phase_sum) run.phases_s[phase] = s / n;
        run.peak_memory_bytes = peak;
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failure) failure = std::current_exception();
      // Peers blocked in a collective with this rank would wait forever: abort every communicator.
      for (ncclComm_t c : all_comms) (void)ncclCommAbort(c);
      all_comms.clear();
      return;
    }
    std::lock_guard<std::mutex> lock(mutex);
    for (ncclComm_t c : {comms.ep, comms.dp, comms.expert_dp}) {
      auto it = std::find(all_comms.begin(), all_comms.end(), c);
      if (c != nullptr && it != all_comms.end()) {
        all_comms.erase(it);
        (void)ncclCommDestroy(c);
      }
    }
  };

  std::vector<std::thread> threads;
  for (std::int64_t r = 0; r < gpus; ++r) threads.emplace_back(rank_main, r);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return run;
}

}  // namespace moesim::proxy
