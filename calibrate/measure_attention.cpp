// The unfused attention core, forward and backward. A shape whose score matrices do not fit in
// 80 % of the free device memory is measured with fewer heads (heads are independent, so the time
// scales with them), and the row records the heads measured.
#include <algorithm>

#include <fmt/format.h>

#include "calibrate/measure.hpp"
#include "kernels/attention.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/reference/compare.hpp"

namespace moesim::calibrate {

void measure_attention(MeasureContext& ctx, hw::Profile& profile) {
  if (ctx.plan.attention.empty()) return;
  ctx.log.progress(fmt::format("attention: {} shapes, forward and backward (cublasGemmStridedBatchedEx + softmax)", ctx.plan.attention.size()));
  for (const AttentionTask& task : ctx.plan.attention) {
    const std::string what = fmt::format("attention {}x{}x{}{}", task.batch_heads, task.seq, task.head_dim, task.causal ? " causal" : "");
    guarded(ctx, what, [&] {
      std::size_t free_bytes = 0, total_bytes = 0;
      MOESIM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      kernels::AttentionShape shape{task.batch_heads, task.seq, task.head_dim, task.causal};
      while (shape.batch_heads > 1 && static_cast<double>(kernels::Attention::device_bytes(shape, true)) > 0.8 * static_cast<double>(free_bytes)) {
        shape.batch_heads /= 2;
      }
      if (shape.batch_heads != task.batch_heads) {
        ctx.log.progress(fmt::format("  {}: measured with {} heads (the score matrices of {} do not fit)", what, shape.batch_heads, task.batch_heads));
      }
      // Two requested shapes can shrink to the same one; the profile loader refuses duplicate rows.
      const bool measured = std::any_of(profile.attention.begin(), profile.attention.end(), [&](const hw::ProfileAttention& r) {
        return r.batch_heads == shape.batch_heads && r.seq == shape.seq && r.head_dim == shape.head_dim && r.causal == shape.causal;
      });
      if (measured) {
        ctx.log.progress(fmt::format("  {}: already measured at that shape", what));
        return;
      }
      kernels::Attention attention(ctx.blas, shape, true);
      kernels::require_close(attention.check_forward_rows(4), 2e-2, what + " forward");
      kernels::require_close(attention.check_backward_rows(4), 4e-2, what + " backward (dQ)");
      const kernels::Summary f = kernels::time_launches(ctx.stream, [&] { attention.forward(); }, timing_plan(ctx.plan.repeats));
      const kernels::Summary b = kernels::time_launches(ctx.stream, [&] { attention.backward(); }, timing_plan(ctx.plan.repeats));
      const double gemm_flops = 4.0 * shape.batch_heads * static_cast<double>(shape.seq) * shape.seq * shape.head_dim;
      ctx.log.detail(fmt::format("  attention {}x{}x{}{}: forward {:.2f} us (spread {:.2f}, {:.0f} TFLOP/s dense), backward {:.2f} us (spread {:.2f})",
                                 shape.batch_heads, shape.seq, shape.head_dim, shape.causal ? " causal" : "", f.median, f.spread(),
                                 gemm_flops / (f.median * 1e-6) / 1e12, b.median, b.spread()));
      // kernels/attention is the unfused core (batched GEMMs + softmax, no dropout): moesim corrects that path.
      profile.attention.push_back(hw::ProfileAttention{hw::AttentionImplementation::kUnfused, hw::AttentionDirection::kForward, shape.batch_heads, shape.seq, shape.head_dim,
                                               shape.causal, to_timing(f)});
      profile.attention.push_back(hw::ProfileAttention{hw::AttentionImplementation::kUnfused, hw::AttentionDirection::kBackward, shape.batch_heads, shape.seq, shape.head_dim,
                                               shape.causal, to_timing(b)});
    });
  }
}

}  // namespace moesim::calibrate
