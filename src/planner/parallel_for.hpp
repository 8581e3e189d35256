#pragma once
// Runs f(i) for i in [0, n) on `threads` worker threads. Work is handed out one index at a time from
// an atomic counter, so the split does not depend on timing; callers write results into slot i, which
// keeps every output in index order whatever the thread count. The first exception thrown by f is
// re-thrown on the calling thread after all workers stop.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

namespace moesim::planner {

/// Progress callback: (phase, done, total), e.g. ("searching", 2560, 110160). parallel_for calls it
/// under a lock, at most about 200 times per run; the CLI throttles what it draws.
using Progress = std::function<void(std::string_view phase, std::int64_t done, std::int64_t total)>;

/// 0 → every hardware thread (at least 1).
[[nodiscard]] inline int resolve_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

template <typename F>
void parallel_for(std::int64_t n, int threads, F&& f, const Progress& progress = {}, std::string_view phase = {}) {
  std::atomic<std::int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mutex;
  const std::int64_t report_every = std::max<std::int64_t>(1, n / 200);
  auto worker = [&] {
    for (;;) {
      const std::int64_t i = next.fetch_add(1);
      if (i >= n || failed.load()) return;
      try {
        f(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        failed = true;
        return;
      }
      const std::int64_t d = done.fetch_add(1) + 1;
      if (progress && (d % report_every == 0 || d == n)) {
        const std::lock_guard<std::mutex> lock(mutex);
        progress(phase, d, n);
      }
    }
  };
  const int count = static_cast<int>(std::min<std::int64_t>(std::max(1, threads), std::max<std::int64_t>(1, n)));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(count - 1));
  for (int t = 1; t < count; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace moesim::planner
