#pragma once
// A tiny harness for the GPU tests (doctest's main cannot return CTest's skip code): runs named
// cases, prints one line each and a summary, and exits 77 with "skipped: no CUDA device" where
// there is no GPU, which CTest reports as skipped rather than passed.
#include <cstdio>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels::test {

struct GpuCase {
  const char* name;
  std::function<void()> run;
};

/// Throws std::runtime_error(message) unless `condition`.
inline void require(bool condition, const std::string& message) {
  if (!condition) throw std::runtime_error(message);
}

inline int run_gpu_cases(const std::vector<GpuCase>& cases) {
  if (cuda_device_count() == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  int passed = 0, failed = 0;
  for (const GpuCase& c : cases) {
    try {
      c.run();
      MOESIM_CUDA_CHECK(cudaDeviceSynchronize());  // an asynchronous fault belongs to this case
      std::printf("ok    %s\n", c.name);
      ++passed;
    } catch (const std::exception& e) {
      std::printf("FAIL  %s: %s\n", c.name, e.what());
      ++failed;
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace moesim::kernels::test
