#pragma once
// The measurements of one calibration run on device 0 (and, for NCCL, on every GPU in use): each
// checks its kernel on seeded random data against the CPU reference before timing it, and appends
// rows to the profile. A failed check or a CUDA error loses that row only: it is logged and listed
// in `failures`, and the run goes on.
#include <functional>
#include <string>
#include <vector>

#include "calibrate/log.hpp"
#include "calibrate/sweep_plan.hpp"
#include "hw/profile.hpp"
#include "kernels/blas_context.hpp"
#include "kernels/device_info.hpp"
#include "kernels/reference/stats.hpp"
#include "kernels/stream.hpp"
#include "kernels/timing.hpp"

namespace moesim::calibrate {

struct MeasureContext {
  const SweepPlan& plan;
  Log& log;
  kernels::Stream& stream;
  kernels::BlasContext& blas;
  kernels::DeviceInfo device;
  std::vector<std::string> failures;     ///< one line per lost row
  std::vector<std::string> unsupported;  ///< precisions / implementations this device or library lacks
};

[[nodiscard]] hw::ProfileTiming to_timing(const kernels::Summary& s);
/// The timing plan of a measurement (alternative: a non-first heuristic algorithm).
[[nodiscard]] kernels::TimingPlan timing_plan(const Repeats& r, bool alternative = false);
/// Runs `body`; an exception is logged and listed as a failure of `what`. False when it threw.
bool guarded(MeasureContext& ctx, const std::string& what, const std::function<void()>& body);
/// Notes once that `what` is not available here.
void note_unsupported(MeasureContext& ctx, const std::string& what);

void measure_copy(MeasureContext& ctx, hw::Profile& profile);
void measure_memory_kernels(MeasureContext& ctx, hw::Profile& profile);  ///< router, permute, unpermute, cast
void measure_gemm(MeasureContext& ctx, hw::Profile& profile);
void measure_grouped_gemm(MeasureContext& ctx, hw::Profile& profile);
void measure_attention(MeasureContext& ctx, hw::Profile& profile);

/// NCCL over `gpus` GPUs (all of them, and power-of-two subgroups; one rank on a single GPU).
void measure_collectives(const SweepPlan& plan, Log& log, int gpus, hw::Profile& profile, std::vector<std::string>& failures);

}  // namespace moesim::calibrate
