// GPU test of the copy kernel: every destination byte checked against the seeded source for sizes
// that exercise the vector body, the unrolled loop's remainder and the byte tail (aligned and not),
// then the bandwidth of our copy and of cudaMemcpyAsync at 1 GiB (read + written bytes).
#include <cstdio>

#include "kernels/copy_bandwidth.hpp"
#include "kernels/stream.hpp"
#include "kernels/tests/gpu_test.hpp"

using namespace moesim::kernels;

int main() {
  return test::run_gpu_cases({
      {"copy: sizes and offsets, every byte",
       [] {
         Stream stream;
         for (std::size_t bytes : {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{4097}, std::size_t{1} << 20,
                                   (std::size_t{1} << 24) + 48}) {
           for (std::size_t offset : {std::size_t{0}, std::size_t{16}, std::size_t{3}}) check_copy(bytes, offset, stream);
         }
       }},
      {"copy: 1 GiB bandwidth, ours vs cudaMemcpyAsync",
       [] {
         const auto ours = measure_copy_bandwidth(std::size_t{1} << 30, 3, 20);
         const auto memcpy = measure_copy_bandwidth(std::size_t{1} << 30, 3, 20, true);
         std::printf("      copy_device 1 GiB: %.1f us, %.0f GB/s; cudaMemcpyAsync: %.1f us, %.0f GB/s (read + written)\n",
                     ours.seconds_median * 1e6, ours.bytes_per_second / 1e9, memcpy.seconds_median * 1e6, memcpy.bytes_per_second / 1e9);
         test::require(ours.bytes_per_second > 0, "no bandwidth measured");
       }},
  });
}
