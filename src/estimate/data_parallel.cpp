#include "estimate/data_parallel.hpp"

#include <algorithm>

namespace moesim::estimate {
namespace {
// Bytes the Adam step touches per locally-owned parameter besides the gradient: read fp32 master,
// m, v (12), write them (12) and the 16-bit model weight (2). The gradient is read twice (the step
// and the grad-norm pass), in fp32 or bf16 (grad_reduce_in_fp32): 34 or 30 bytes in all.
constexpr double kAdamStateBytesPerParam = 26.0;
}  // namespace

double ddp_bucket_params(double dp_ranks) { return std::max(40e6, 1e6 * dp_ranks); }

double grad_reduce_bytes_per_param(const Scenario& s) {
  return s.precision == Precision::kFp16 || !s.optimizer.grad_reduce_in_fp32 ? 2.0 : 4.0;
}

double param_gather_bytes_per_param(const Scenario& s) {
  const bool fp8_weights = s.precision == Precision::kFp8 || s.precision == Precision::kFp8Blockwise;
  if (s.optimizer.fp8_param_gather && fp8_weights) return 1.0;
  // NVFP4: 4-bit values and one E4M3 scale per 16 (the rowwise copy is what the gather moves).
  if (s.optimizer.fp4_param_gather && s.precision == Precision::kNvfp4) return 0.5 + 1.0 / 16.0;
  return kParamGatherBytesPerParam;
}

double optimizer_step_seconds(const Scenario& s, const compute::KernelCostModel& kernels,
                              const schedule::RankParams& params) {
  const double dp = static_cast<double>(s.parallel.dp);
  const double edp = static_cast<double>(s.parallel.edp(s.system.gpus));
  const double owned = s.optimizer.distributed ? params.dense / dp + params.expert / edp : params.total();
  return kernels.memory_bound(Bytes(owned * (kAdamStateBytesPerParam + 2.0 * grad_reduce_bytes_per_param(s)))).value();
}

}  // namespace moesim::estimate
