#include "kernels/gemm_lt.hpp"

#include <stdexcept>

#include "kernels/cuda_check.hpp"

namespace moesim::kernels {
namespace {

cudaDataType_t element_type(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::kBf16: return CUDA_R_16BF;
    case GemmPrecision::kFp8:
    case GemmPrecision::kMxfp8: return CUDA_R_8F_E4M3;
    case GemmPrecision::kNvfp4:
#if CUBLAS_VERSION >= 120800
      return CUDA_R_4F_E2M1;
#else
      break;
#endif
  }
  throw std::logic_error("element_type: precision without a cuBLASLt type in this toolkit");
}

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& value, const char* name) {
  check_cublas(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof value), name, __FILE__, __LINE__);
}

template <class T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const T& value, const char* name) {
  check_cublas(cublasLtMatmulPreferenceSetAttribute(p, attr, &value, sizeof value), name, __FILE__, __LINE__);
}

}  // namespace

std::string gemm_precision_problem(GemmPrecision p, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  const std::string device = "compute capability " + std::to_string(cc_major) + "." + std::to_string(cc_minor);
  switch (p) {
    case GemmPrecision::kBf16: return cc >= 80 ? "" : "BF16 tensor cores need compute capability 8.0+, device has " + device;
    case GemmPrecision::kFp8: return cc >= 89 ? "" : "FP8 tensor cores need compute capability 8.9+, device has " + device;
    case GemmPrecision::kMxfp8:
    case GemmPrecision::kNvfp4:
#if CUBLAS_VERSION >= 120800
      if (cublasLtGetVersion() < 120800) return "block-scaled FP8/FP4 needs cuBLASLt 12.8+, loaded " + std::to_string(cublasLtGetVersion());
      return cc >= 100 ? "" : "block-scaled MXFP8/NVFP4 needs compute capability 10.0+ (Blackwell), device has " + device;
#else
      return "block-scaled MXFP8/NVFP4 needs cuBLASLt 12.8+ at build time";
#endif
  }
  return "unknown precision";
}

LtMatmul::LtMatmul(cublasLtHandle_t handle, GemmPrecision precision, const GemmShape& shape, std::size_t workspace_bytes,
                   int max_algorithms, unsigned alignment_bytes, GemmLayout layout, bool accumulate_fp32)
    : handle_(handle), precision_(precision), shape_(shape), workspace_bytes_(workspace_bytes), accumulate_(accumulate_fp32) {
  if ((layout != GemmLayout::kForward || accumulate_fp32) && precision != GemmPrecision::kBf16) {
    throw std::invalid_argument("LtMatmul: backward layouts and FP32 accumulation are BF16 only");
  }
  const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n), k = static_cast<std::uint64_t>(shape.k);
  const auto ld_k = static_cast<std::int64_t>(shape.k);
  const auto ld_n = static_cast<std::int64_t>(shape.n);
  const auto ld_m = static_cast<std::int64_t>(shape.m);
  MOESIM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // Column-major view of the row-major product Y[m x n] = L R: Y^T = R^T L^T, so cuBLAS's A is the
  // right operand `w` and its B the left operand `x`; a row-major [r x c] buffer is column-major [c x r].
  const bool forward = layout == GemmLayout::kForward;
  set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, forward ? CUBLAS_OP_T : CUBLAS_OP_N, "cublasLtMatmulDescSetAttribute(TRANSA)");
  set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, layout == GemmLayout::kWgrad ? CUBLAS_OP_T : CUBLAS_OP_N,
           "cublasLtMatmulDescSetAttribute(TRANSB)");
  if (precision == GemmPrecision::kFp8) {
    // Transformer Engine's forward GEMM accumulates without the periodic FP32 promotion
    // (fp8_gemm_fprop use_split_accumulator=False); backward GEMMs promote.
    set_desc(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, std::int8_t{1}, "cublasLtMatmulDescSetAttribute(FAST_ACCUM)");
  }
#if CUBLAS_VERSION >= 120800
  if (precision == GemmPrecision::kMxfp8 || precision == GemmPrecision::kNvfp4) {
    const std::int32_t mode = precision == GemmPrecision::kMxfp8 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode, "cublasLtMatmulDescSetAttribute(A_SCALE_MODE)");
    set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode, "cublasLtMatmulDescSetAttribute(B_SCALE_MODE)");
  }
#endif
  const cudaDataType_t in = element_type(precision);
  if (forward) {
    MOESIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, in, k, n, ld_k));  // W [n x k]: k x n column-major, used transposed
  } else {
    MOESIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, in, n, k, ld_n));  // W or X [k x n]: n x k column-major
  }
  if (layout == GemmLayout::kWgrad) {
    MOESIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, in, m, k, ld_m));  // dY [k x m]: m x k column-major, transposed
  } else {
    MOESIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, in, k, m, ld_k));  // X or dY [m x k]: k x m column-major
  }
  // Y: n x m column-major = [m x n] row-major
  MOESIM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, accumulate_fp32 ? CUDA_R_32F : CUDA_R_16BF, n, m, ld_n));

  cublasLtMatmulPreference_t pref = nullptr;
  MOESIM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  try {
    set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<std::uint64_t>(workspace_bytes), "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, std::uint32_t{alignment_bytes}, "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_A_BYTES)");
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, std::uint32_t{alignment_bytes}, "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_B_BYTES)");
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, std::uint32_t{alignment_bytes}, "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_C_BYTES)");
    set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, std::uint32_t{alignment_bytes}, "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT_D_BYTES)");
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(max_algorithms > 0 ? max_algorithms : 1));
    int returned = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, c_, pref, static_cast<int>(results.size()),
                                                                 results.data(), &returned);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE) {
      reason_ = std::string("cuBLASLt has no algorithm for ") + std::string(precision_name(precision)) + " at this shape (" +
                cublasGetStatusName(status) + ")";
    } else {
      MOESIM_CUBLAS_CHECK(status);
      for (int i = 0; i < returned; ++i) {
        if (results[static_cast<std::size_t>(i)].state == CUBLAS_STATUS_SUCCESS) algorithms_.push_back(results[static_cast<std::size_t>(i)]);
      }
      if (algorithms_.empty()) reason_ = "cuBLASLt's heuristic returned no usable algorithm";
    }
  } catch (...) {
    (void)cublasLtMatmulPreferenceDestroy(pref);
    throw;
  }
  MOESIM_CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
}

LtMatmul::~LtMatmul() {
  if (a_ != nullptr) (void)cublasLtMatrixLayoutDestroy(a_);
  if (b_ != nullptr) (void)cublasLtMatrixLayoutDestroy(b_);
  if (c_ != nullptr) (void)cublasLtMatrixLayoutDestroy(c_);
  if (desc_ != nullptr) (void)cublasLtMatmulDescDestroy(desc_);
}

void LtMatmul::run(const GemmPointers& p, int algorithm, void* workspace, cudaStream_t stream) {
  if (algorithm < 0 || algorithm >= algorithm_count()) throw std::out_of_range("LtMatmul::run: no heuristic result #" + std::to_string(algorithm));
  if (precision_ != GemmPrecision::kBf16) {
    // cuBLAS's A is W and its B is X.
    set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, p.w_scale, "cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)");
    set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, p.x_scale, "cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)");
  }
  const float alpha = 1.0f, beta = accumulate_ ? 1.0f : 0.0f;
  MOESIM_CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, &alpha, p.w, a_, p.x, b_, &beta, p.y, c_, p.y, c_,
                                     &algorithms_[static_cast<std::size_t>(algorithm)].algo, workspace, workspace_bytes_, stream));
}

}  // namespace moesim::kernels
