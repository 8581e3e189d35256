// The BF16 -> FP8 cast. The profile records the one-pass delayed-scaling cast (Megatron-Core's
// default recipe: the scale comes from earlier steps' amax, this tensor's amax is reduced in the
// same pass); the two-pass current-scaling cast is checked and logged too.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "calibrate/measure.hpp"
#include "calibrate/measure_internal.hpp"
#include "kernels/cast_fp8.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/numeric.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/cast_ref.hpp"

namespace moesim::calibrate {

void measure_cast(MeasureContext& ctx, const KernelTask& task, hw::Profile& profile) {
  const std::size_t n = static_cast<std::size_t>(task.tokens) * static_cast<std::size_t>(task.hidden);
  constexpr std::uint64_t kSeed = 0xca57;
  constexpr float kAmplitude = 3.0f;
  kernels::DeviceBuffer<std::uint16_t> x(n);
  kernels::DeviceBuffer<std::uint8_t> out(n);
  kernels::DeviceBuffer<float> amax(1), scale(1), scale_inv(1);
  kernels::fill_random_bf16(x.data(), n, kSeed, kAmplitude, ctx.stream);

  // The reference amax over the whole tensor, regenerated on the host (no copy back).
  std::uint16_t max_bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<std::uint16_t>(kernels::float_to_bf16(kernels::random_uniform(kSeed, i) * kAmplitude) & 0x7fffu);
    if (a > max_bits) max_bits = a;
  }
  const float want_amax = kernels::bf16_to_float(max_bits);
  const float want_scale = kernels::fp8_scale_from_amax(want_amax);
  const auto check_bytes = [&](float s, const char* recipe) {
    // 64 runs of 4096 bytes spread over the tensor, and the tail.
    for (std::size_t i = 0; i <= 64; ++i) {
      const std::size_t len = std::min<std::size_t>(4096, n);
      const std::size_t first = i == 64 ? n - len : (n - len) / 64 * i;
      const auto got = out.download(first, len);
      for (std::size_t j = 0; j < len; ++j) {
        const std::uint16_t xi = kernels::float_to_bf16(kernels::random_uniform(kSeed, first + j) * kAmplitude);
        if (got[j] != kernels::cast_fp8_reference(xi, s)) {
          throw std::runtime_error(fmt::format("wrong result ({}): byte {} is 0x{:02x}, reference 0x{:02x}", recipe, first + j, got[j], kernels::cast_fp8_reference(xi, s)));
        }
      }
    }
  };
  const auto read = [](const kernels::DeviceBuffer<float>& b) { return b.download()[0]; };

  out.fill_bytes(kernels::kPoisonByte);
  kernels::cast_fp8_current(x.data(), n, out.data(), amax.data(), scale.data(), scale_inv.data(), ctx.stream);
  ctx.stream.synchronize();
  if (read(amax) != want_amax || read(scale) != want_scale) {
    throw std::runtime_error(fmt::format("wrong result (current scaling): amax {} scale {}, reference {} {}", read(amax), read(scale), want_amax, want_scale));
  }
  check_bytes(want_scale, "current scaling");

  out.fill_bytes(kernels::kPoisonByte);
  kernels::cast_fp8_delayed(x.data(), n, scale.data(), out.data(), amax.data(), scale_inv.data(), ctx.stream);
  ctx.stream.synchronize();
  if (read(amax) != want_amax || read(scale_inv) != 1.0f / want_scale) throw std::runtime_error("wrong result (delayed scaling): amax or scale_inv");
  check_bytes(want_scale, "delayed scaling");

  const kernels::Summary s = kernels::time_launches(
      ctx.stream, [&] { kernels::cast_fp8_delayed(x.data(), n, scale.data(), out.data(), amax.data(), scale_inv.data(), ctx.stream); },
      timing_plan(ctx.plan.repeats));
  const kernels::Summary two = kernels::time_launches(
      ctx.stream, [&] { kernels::cast_fp8_current(x.data(), n, out.data(), amax.data(), scale.data(), scale_inv.data(), ctx.stream); },
      timing_plan(ctx.plan.repeats, true));
  const auto bytes = static_cast<std::int64_t>(kernels::cast_fp8_delayed_bytes(n));
  ctx.log.detail(fmt::format("  cast_fp8 {}: delayed scaling {:.2f} us (spread {:.2f}), {:.1f} GB/s; current scaling (2 passes, not recorded) {:.2f} us, {:.1f} GB/s",
                             describe(task), s.median, s.spread(), gbps(static_cast<double>(bytes), s.median), two.median,
                             gbps(static_cast<double>(kernels::cast_fp8_current_bytes(n)), two.median)));
  profile.kernels.push_back(hw::ProfileKernel{hw::MemoryKernel::kCastFp8, bytes, {{"tokens", task.tokens}, {"hidden", task.hidden}}, to_timing(s)});
}

}  // namespace moesim::calibrate
