// The device-to-device copy: the bandwidth ceiling the memory-bound kernels are compared with.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "calibrate/measure.hpp"
#include "calibrate/measure_internal.hpp"
#include "kernels/copy_bandwidth.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/device_buffer.hpp"
#include "kernels/random_fill.hpp"

namespace moesim::calibrate {

void measure_copy(MeasureContext& ctx, hw::Profile& profile) {
  if (ctx.plan.copy_bytes.empty()) return;
  ctx.log.progress(fmt::format("copy: {} sizes", ctx.plan.copy_bytes.size()));
  const std::size_t largest = *std::max_element(ctx.plan.copy_bytes.begin(), ctx.plan.copy_bytes.end());
  guarded(ctx, "copy", [&] {
    // One pair of buffers for every size: smaller copies use their beginning.
    kernels::DeviceBuffer<std::uint16_t> src(largest / 2 + 8), dst(largest / 2 + 8);
    kernels::fill_random_bf16(src.data(), src.size(), 0xc0b1, 1.0f, ctx.stream);
    for (const std::size_t bytes : ctx.plan.copy_bytes) {
      guarded(ctx, fmt::format("copy {} bytes", bytes), [&] {
        kernels::check_copy(bytes, 0, ctx.stream);
        const kernels::Summary s = kernels::time_launches(ctx.stream, [&] { kernels::copy_device(src.data(), dst.data(), bytes, ctx.stream); },
                                                          timing_plan(ctx.plan.repeats));
        hw::ProfileKernel row{hw::MemoryKernel::kCopy, static_cast<std::int64_t>(2 * bytes), {{"bytes", static_cast<std::int64_t>(bytes)}}, to_timing(s)};
        ctx.log.detail(fmt::format("  copy {:>11} B: {:9.2f} us (spread {:.2f}), {:7.1f} GB/s read+written", bytes, s.median, s.spread(),
                                   gbps(static_cast<double>(row.bytes), s.median)));
        profile.kernels.push_back(std::move(row));
      });
    }
    // cudaMemcpyAsync at the largest size, for the log: a second opinion on the ceiling.
    const kernels::Summary m = kernels::time_launches(ctx.stream, [&] {
      MOESIM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), largest, cudaMemcpyDeviceToDevice, ctx.stream));
    }, timing_plan(ctx.plan.repeats));
    ctx.log.progress(fmt::format("  cudaMemcpyAsync {} B: {:.2f} us, {:.1f} GB/s read+written (not recorded; our copy kernel is the reference)",
                                 largest, m.median, gbps(2.0 * static_cast<double>(largest), m.median)));
  });
}

}  // namespace moesim::calibrate
