#pragma once
// Helpers shared by the measure_*.cpp files (not part of the driver's interface).
#include <string>

#include "calibrate/measure.hpp"

namespace moesim::calibrate {

void measure_router(MeasureContext& ctx, const KernelTask& task, hw::Profile& profile);
void measure_permute(MeasureContext& ctx, const KernelTask& task, hw::Profile& profile);  ///< permute or unpermute
void measure_cast(MeasureContext& ctx, const KernelTask& task, hw::Profile& profile);

/// "16384 tokens x 7168 hidden, 256 experts top-8" for logs.
[[nodiscard]] std::string describe(const KernelTask& task);

/// GB/s (1e9 bytes per second) of `bytes` in `us` microseconds.
[[nodiscard]] inline double gbps(double bytes, double us) { return us > 0 ? bytes / (us * 1e-6) / 1e9 : 0.0; }

}  // namespace moesim::calibrate
