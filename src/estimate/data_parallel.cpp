#include "estimate/data_parallel.hpp"

#include <algorithm>

namespace moesim::estimate {
namespace {
// Bytes the Adam step touches per locally-owned parameter: read fp32 master, m, v and the fp32
// grad (16), write master, m, v (12) and the 16-bit model weight (2); the grad-norm pass reads the
// grad once more (4).
constexpr double kAdamBytesPerParam = 34.0;
}  // namespace

double ddp_bucket_params(double dp_ranks) { return std::max(40e6, 1e6 * dp_ranks); }

double grad_reduce_bytes_per_param(const Scenario& s) { return s.precision == Precision::kFp16 ? 2.0 : 4.0; }

double param_gather_bytes_per_param(const Scenario& s) {
  const bool fp8_weights = s.precision == Precision::kFp8 || s.precision == Precision::kFp8Blockwise;
  return s.optimizer.fp8_param_gather && fp8_weights ? 1.0 : kParamGatherBytesPerParam;
}

double optimizer_step_seconds(const Scenario& s, const compute::KernelCostModel& kernels,
                              const schedule::RankParams& params) {
  const double dp = static_cast<double>(s.parallel.dp);
  const double edp = static_cast<double>(s.parallel.edp(s.system.gpus));
  const double owned = s.optimizer.distributed ? params.dense / dp + params.expert / edp : params.total();
  return kernels.memory_bound(Bytes(owned * kAdamBytesPerParam)).value();
}

}  // namespace moesim::estimate
