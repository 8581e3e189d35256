#include "kernels/grouped_gemm.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "kernels/cuda_check.hpp"
#include "kernels/numeric.hpp"

namespace moesim::kernels {
namespace {

std::int64_t total_tokens(const std::vector<int>& tokens) {
  return std::accumulate(tokens.begin(), tokens.end(), std::int64_t{0});
}

// The largest power of two up to 256 dividing every address: cuBLASLt's heuristic only offers
// algorithms whose alignment needs the operands meet.
unsigned common_alignment(const std::vector<const void*>& ptrs) {
  unsigned a = 256;
  for (const void* p : ptrs) {
    while (a > 1 && reinterpret_cast<std::uintptr_t>(p) % a != 0) a /= 2;
  }
  return a;
}

}  // namespace

GroupedGemm::GroupedGemm(const BlasContext& blas, const GroupedGemmShape& shape)
    : blas_(blas),
      shape_(shape),
      operands_(GemmPrecision::kBf16, std::max<std::int64_t>(total_tokens(shape.tokens), 1),
                static_cast<std::int64_t>(shape.tokens.size()) * shape.n, shape.n, shape.k, blas.stream()) {
  if (shape.tokens.empty() || shape.n <= 0 || shape.k <= 0) throw std::invalid_argument("GroupedGemm: needs experts, n > 0 and k > 0");
  std::int64_t row = 0;
  std::vector<const void*> host_a, host_b, all;
  std::vector<void*> host_c;
  for (std::size_t e = 0; e < shape.tokens.size(); ++e) {
    if (shape.tokens[e] < 0) throw std::invalid_argument("GroupedGemm: negative token count");
    offsets_.push_back(row);
    const GemmPointers p = operands_.rows(row, static_cast<std::int64_t>(e) * shape.n);
    row += shape.tokens[e];
    if (shape.tokens[e] == 0) continue;  // an expert without tokens launches nothing either way
    // cuBLAS column-major, as LtMatmul: A = W_e (k x n, transposed), B = X_e (k x t_e), C = Y_e (n x t_e).
    trans_a_.push_back(CUBLAS_OP_T);
    trans_b_.push_back(CUBLAS_OP_N);
    m_.push_back(static_cast<int>(shape.n));
    n_.push_back(shape.tokens[e]);
    k_.push_back(static_cast<int>(shape.k));
    lda_.push_back(static_cast<int>(shape.k));
    ldb_.push_back(static_cast<int>(shape.k));
    ldc_.push_back(static_cast<int>(shape.n));
    alpha_.push_back(1.0f);
    beta_.push_back(0.0f);
    group_size_.push_back(1);
    host_a.push_back(p.w);
    host_b.push_back(p.x);
    host_c.push_back(p.y);
    all.insert(all.end(), {p.w, p.x, p.y});
  }
  const unsigned alignment = common_alignment(all);
  for (const int t : shape.tokens) {
    if (t == 0 || loop_gemms_.count(t) != 0) continue;
    auto gemm = std::make_unique<LtMatmul>(blas.lt(), GemmPrecision::kBf16, GemmShape{t, shape.n, shape.k}, blas.workspace_bytes(), 1, alignment);
    if (!gemm->supported()) throw CudaError("GroupedGemm: no cuBLASLt algorithm for an expert of " + std::to_string(t) + " tokens: " + gemm->unsupported_reason());
    loop_gemms_.emplace(t, std::move(gemm));
  }
  a_ptrs_ = DeviceBuffer<const void*>(host_a);
  b_ptrs_ = DeviceBuffer<const void*>(host_b);
  c_ptrs_ = DeviceBuffer<void*>(host_c);
  probe_grouped_batched(blas.stream());
}

void GroupedGemm::probe_grouped_batched(cudaStream_t stream) {
#if CUBLAS_VERSION >= 120500
  if (group_size_.empty()) return;
  const cublasStatus_t status = cublasGemmGroupedBatchedEx(
      blas_.blas(), trans_a_.data(), trans_b_.data(), m_.data(), n_.data(), k_.data(), alpha_.data(), a_ptrs_.data(), CUDA_R_16BF,
      lda_.data(), b_ptrs_.data(), CUDA_R_16BF, ldb_.data(), beta_.data(), c_ptrs_.data(), CUDA_R_16BF, ldc_.data(),
      static_cast<int>(group_size_.size()), group_size_.data(), CUBLAS_COMPUTE_32F);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_ARCH_MISMATCH) {
    grouped_problem_ = std::string("cublasGemmGroupedBatchedEx: ") + cublasGetStatusName(status) + " for BF16 on this device";
    return;
  }
  MOESIM_CUBLAS_CHECK(status);
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream));
#else
  (void)stream;
  grouped_problem_ = "cublasGemmGroupedBatchedEx needs cuBLAS 12.5+ at build time";
#endif
}

void GroupedGemm::run_grouped_batched(cudaStream_t stream) {
  if (!grouped_problem_.empty()) throw std::logic_error("run_grouped_batched: " + grouped_problem_);
  if (group_size_.empty()) return;
  // The cuBLAS handle stays bound to the context's stream: cublasSetStream would also reset the
  // workspace that graph capture needs.
  if (stream != blas_.stream()) throw std::logic_error("run_grouped_batched: the stream must be the BlasContext's");
#if CUBLAS_VERSION >= 120500
  MOESIM_CUBLAS_CHECK(cublasGemmGroupedBatchedEx(
      blas_.blas(), trans_a_.data(), trans_b_.data(), m_.data(), n_.data(), k_.data(), alpha_.data(), a_ptrs_.data(), CUDA_R_16BF,
      lda_.data(), b_ptrs_.data(), CUDA_R_16BF, ldb_.data(), beta_.data(), c_ptrs_.data(), CUDA_R_16BF, ldc_.data(),
      static_cast<int>(group_size_.size()), group_size_.data(), CUBLAS_COMPUTE_32F));
#endif
}

void GroupedGemm::run_loop(cudaStream_t stream) {
  for (std::size_t e = 0; e < shape_.tokens.size(); ++e) {
    const int t = shape_.tokens[e];
    if (t == 0) continue;
    loop_gemms_.at(t)->run(operands_.rows(offsets_[e], static_cast<std::int64_t>(e) * shape_.n), 0, blas_.lt_workspace(), stream);
  }
}

Comparison GroupedGemm::check(bool grouped_batched, int samples_per_expert, cudaStream_t stream) {
  operands_.poison_y();
  grouped_batched ? run_grouped_batched(stream) : run_loop(stream);
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> got, want;
  for (std::size_t e = 0; e < shape_.tokens.size(); ++e) {
    const int t = shape_.tokens[e];
    for (int i = 0; i < samples_per_expert && t > 0; ++i) {
      // The expert's last row and last column first: a wrong per-expert extent shows there.
      const std::int64_t r = i == 0 ? t - 1 : static_cast<std::int64_t>(random_bits(0x96e0 + e, 2 * static_cast<std::uint64_t>(i)) % static_cast<std::uint64_t>(t));
      const std::int64_t c = i == 0 ? shape_.n - 1 : static_cast<std::int64_t>(random_bits(0x96e0 + e, 2 * static_cast<std::uint64_t>(i) + 1) % static_cast<std::uint64_t>(shape_.n));
      got.push_back(operands_.y_at(offsets_[e] + r, c));
      want.push_back(gemm_reference_entry(GemmPrecision::kBf16, shape_.k, offsets_[e] + r, static_cast<std::int64_t>(e) * shape_.n + c));
    }
  }
  return compare(got, want);
}

}  // namespace moesim::kernels
