#include "program/data_parallel.hpp"

#include <algorithm>

namespace moesim::program {
namespace {
// Bytes the Adam step touches per locally-owned parameter besides the gradient: read fp32 master,
// m, v (12), write them (12) and the 16-bit model weight (2). The gradient is read twice (the step
// and the grad-norm pass), in fp32 or bf16 (grad_reduce_in_fp32): 34 or 30 bytes in all.
constexpr double kAdamStateBytesPerParam = 26.0;
// With store_param_remainders the step reads and writes m, v (8), the 16-bit remainder (2) and the
// bf16 weight (2): 24 bytes.
constexpr double kAdamRemainderStateBytesPerParam = 24.0;
}  // namespace

double ddp_bucket_params(double dp_ranks) { return std::max(40e6, 1e6 * dp_ranks); }

double grad_reduce_bytes_per_param(const Scenario& s) {
  return s.precision == Precision::kFp16 || !s.optimizer.grad_reduce_in_fp32 ? 2.0 : 4.0;
}

double replica_gradient_share(const Scenario& s) {
  const PlacementSpec& pl = s.moe.placement;
  const std::int64_t experts = s.model.num_moe_experts;
  if (!pl.eplb() || pl.redundant_experts <= 0 || experts <= 0 || s.parallel.ep <= 1) return 0.0;
  const double share = static_cast<double>(pl.redundant_experts) / static_cast<double>(experts + pl.redundant_experts);
  return s.optimizer.distributed ? share / static_cast<double>(s.parallel.edp(s.system.gpus)) : share;
}

collective::GroupPlacement replica_group(const schedule::GroupLayout& g) {
  return {.size = 2, .per_domain = g.ep.crosses_domains() ? 1 : 2};
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
  const double state = s.optimizer.store_param_remainders ? kAdamRemainderStateBytesPerParam : kAdamStateBytesPerParam;
  const double grad = grad_reduce_bytes_per_param(s);
  const double host_share = s.offload.optimizer_fraction;
  // whatif.kernel_speedup's optimizer class speeds up the GPU's step kernel, not the host's.
  const double gpu_s = kernels.memory_bound(Bytes((1.0 - host_share) * owned * (state + 2.0 * grad))).value() /
                       s.whatif.speedup(OpClass::kOptimizer);
  if (host_share <= 0) return gpu_s;
  // Megatron's HybridDeviceOptimizer (--optimizer-cpu-offload) steps the offloaded share on the host
  // while the GPU steps the rest: its gradients go down the host link, the host's DRAM carries the
  // Adam traffic, the updated 16-bit weights come back up. The copies and the host step are taken in
  // sequence (no pipelining across parameter groups: an upper bound), the two devices in parallel.
  const double host_params = host_share * owned;
  const double link = s.system.host_link_bandwidth.value();
  const double host_s = host_params * grad / link +
                        host_params * (state + 2.0 * grad) / s.system.host_memory_bandwidth.value() +
                        host_params * kParamGatherBytesPerParam / link;
  return std::max(gpu_s, host_s);
}

double exposed_grad_reduction(const DpOverlapWindow& w) {
  if (w.seconds <= 0) return 0;
  const double chunks = static_cast<double>(std::max<std::int64_t>(w.chunks, 1));
  const double per_chunk = w.seconds / chunks;
  const double chunk_buckets = std::max(1.0, w.buckets / chunks);
  const double chunk_pass = w.pass_seconds / chunks;
  // Times relative to the end of the stage's last backward pass; the stream starts free.
  double stream_free = -1e300;
  for (std::int64_t k = std::max<std::int64_t>(w.chunks, 1) - 1; k >= 0; --k) {
    const double last_end = -static_cast<double>(k * std::max<std::int64_t>(w.pp, 1)) * chunk_pass;
    const double last_start = last_end - chunk_pass;
    // Its buckets fill during that last pass: the last one is ready when it ends.
    stream_free = std::max(last_end + per_chunk / chunk_buckets, std::max(last_start, stream_free) + per_chunk);
  }
  return std::max(0.0, stream_free);
}

double exposed_param_gather(const DpOverlapWindow& w) {
  if (w.seconds <= 0) return 0;
  const std::int64_t chunks = std::max<std::int64_t>(w.chunks, 1);
  const double per_chunk = w.seconds / static_cast<double>(chunks);
  const double chunk_buckets = std::max(1.0, w.buckets / static_cast<double>(chunks));
  const double chunk_pass = w.pass_seconds / static_cast<double>(chunks);
  double compute = 0, stream = 0, exposed = 0;
  for (std::int64_t k = 0; k < chunks; ++k) {
    const double first_bucket = stream + per_chunk / chunk_buckets;
    stream += per_chunk;
    const double start = std::max(compute, first_bucket);
    const double end = std::max(start + chunk_pass, stream);
    exposed += (start - compute) + (end - (start + chunk_pass));
    // The chunk's remaining warm-up micro-batches need no new weights.
    compute = end + static_cast<double>(std::max<std::int64_t>(w.pp, 1) - 1) * chunk_pass;
  }
  return exposed;
}

}  // namespace moesim::program
