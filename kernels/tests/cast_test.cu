// GPU tests of the BF16 -> FP8 E4M3 casts against the CPU reference, bit for bit: amax, the scale
// derived from it, the scale inverse and every output byte, for current scaling (two passes) and
// delayed scaling (one pass, with saturation), at sizes with and without a tail.
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/cast_fp8.hpp"
#include "kernels/copy_bandwidth.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/cast_ref.hpp"
#include "kernels/stream.hpp"
#include "kernels/tests/gpu_test.hpp"
#include "kernels/timing.hpp"

using namespace moesim::kernels;

namespace {

float read(const DeviceBuffer<float>& b) { return b.download()[0]; }

void check_cast(std::size_t n, float amplitude, float delayed_scale) {
  Stream stream;
  const std::string what = std::to_string(n) + " values";
  DeviceBuffer<std::uint16_t> x(n);
  DeviceBuffer<std::uint8_t> out(n);
  DeviceBuffer<float> amax(1), scale(1), scale_inv(1);
  fill_random_bf16(x.data(), n, 0xca57 + n, amplitude, stream);
  const auto hx = x.download();
  const float want_amax = amax_reference(hx.data(), n);

  out.fill_bytes(kPoisonByte);
  cast_fp8_current(x.data(), n, out.data(), amax.data(), scale.data(), scale_inv.data(), stream);
  stream.synchronize();
  test::require(read(amax) == want_amax, "current scaling, " + what + ": amax " + std::to_string(read(amax)) + " vs " + std::to_string(want_amax));
  const float want_scale = fp8_scale_from_amax(want_amax);
  test::require(read(scale) == want_scale, "current scaling, " + what + ": scale differs");
  test::require(read(scale_inv) == 1.0f / want_scale, "current scaling, " + what + ": scale_inv differs");
  auto got = out.download();
  for (std::size_t i = 0; i < n; ++i) {
    test::require(got[i] == cast_fp8_reference(hx[i], want_scale), "current scaling, " + what + ": byte " + std::to_string(i) + " differs");
  }

  DeviceBuffer<float> in_scale(std::vector<float>{delayed_scale});
  out.fill_bytes(kPoisonByte);
  cast_fp8_delayed(x.data(), n, in_scale.data(), out.data(), amax.data(), scale_inv.data(), stream);
  stream.synchronize();
  test::require(read(amax) == want_amax, "delayed scaling, " + what + ": amax differs");
  test::require(read(scale_inv) == 1.0f / delayed_scale, "delayed scaling, " + what + ": scale_inv differs");
  got = out.download();
  for (std::size_t i = 0; i < n; ++i) {
    test::require(got[i] == cast_fp8_reference(hx[i], delayed_scale), "delayed scaling, " + what + ": byte " + std::to_string(i) + " differs");
  }
}

void report_bandwidth() {
  Stream stream;
  const double copy_bw = measure_copy_bandwidth(std::size_t{1} << 30, 3, 10).bytes_per_second;
  const std::size_t n = std::size_t{16384} * 7168;
  DeviceBuffer<std::uint16_t> x(n);
  DeviceBuffer<std::uint8_t> out(n);
  DeviceBuffer<float> amax(1), scale(std::vector<float>{1.0f}), scale_inv(1);
  fill_random_bf16(x.data(), n, 1, 2.0f, stream);
  TimingPlan plan;
  plan.repeats = 10;
  const double d_us = time_launches(stream, [&] { cast_fp8_delayed(x.data(), n, scale.data(), out.data(), amax.data(), scale_inv.data(), stream); }, plan).median;
  const double c_us = time_launches(stream, [&] { cast_fp8_current(x.data(), n, out.data(), amax.data(), scale.data(), scale_inv.data(), stream); }, plan).median;
  const double d_bw = static_cast<double>(cast_fp8_delayed_bytes(n)) / (d_us * 1e-6);
  const double c_bw = static_cast<double>(cast_fp8_current_bytes(n)) / (c_us * 1e-6);
  std::printf("      cast 16384x7168 delayed (1 pass): %.1f us, %.0f GB/s = %.0f%% of copy; current (2 passes): %.1f us, %.0f GB/s = %.0f%%\n",
              d_us, d_bw / 1e9, 100 * d_bw / copy_bw, c_us, c_bw / 1e9, 100 * c_bw / copy_bw);
}

}  // namespace

int main() {
  return test::run_gpu_cases({
      {"cast fp8: amax, scale and every byte, with tails", [] {
         check_cast(16 * 1000, 3.7f, 100.0f);
         check_cast((std::size_t{1} << 20) + 7, 0.01f, 500000.0f);  // saturates: |x| * scale up to 5000
         check_cast(5, 1.0f, 2.0f);                                   // tail only
       }},
      {"cast fp8: bandwidth vs copy", report_bandwidth},
  });
}
