// GPU test of the copy kernel: checks the bytes against the host reference on random data for
// sizes that exercise the vector body and the byte tail, then reports the bandwidth. Exits 77
// ("skipped: no CUDA device") where there is no GPU, which CTest reports as skipped.
#include <cstdio>
#include <exception>

#include "kernels/copy_bandwidth.hpp"
#include "kernels/cuda_check.hpp"

int main() {
  using namespace moesim::kernels;
  if (cuda_device_count() == 0) {
    std::puts("skipped: no CUDA device");
    return 77;
  }
  try {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{4097}, std::size_t{1} << 20}) {
      (void)measure_copy_bandwidth(bytes, 0, 1);  // throws on a wrong byte
    }
    const auto m = measure_copy_bandwidth(std::size_t{1} << 30, 5, 20);
    std::printf("copy_device 1 GiB: %.1f us, %.0f GB/s (read + written)\n", m.seconds_median * 1e6, m.bytes_per_second / 1e9);
    std::puts("1 passed, 0 failed");
    return 0;
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n0 passed, 1 failed\n", e.what());
    return 1;
  }
}
