#include "kernels/attention.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_softmax.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/numeric.hpp"
#include "kernels/random_fill.hpp"
#include "kernels/reference/attention_ref.hpp"

namespace moesim::kernels {
namespace {

constexpr std::uint64_t kQSeed = 0xa77e0001, kKSeed = 0xa77e0002, kVSeed = 0xa77e0003, kDoutSeed = 0xa77e0004;
// Q and K span [-2, 2) so that the scores' softmax is peaked like a trained model's, not uniform.
constexpr float kQkAmplitude = 2.0f;

// Elements of one head's [seq x width] slice, and of the whole [batch_heads x seq x width] tensor;
// width is head_dim (Q, K, dQ, dK) or value_dim() (V, O, dO, dV).
std::size_t head_elements(const AttentionShape& s, int width) {
  return static_cast<std::size_t>(s.seq) * static_cast<std::size_t>(width);
}
std::size_t tensor_elements(const AttentionShape& s, int width) {
  return static_cast<std::size_t>(s.batch_heads) * head_elements(s, width);
}
std::size_t qk_elements(const AttentionShape& s) { return tensor_elements(s, s.head_dim); }
std::size_t v_elements(const AttentionShape& s) { return tensor_elements(s, s.value_dim()); }
std::size_t score_elements(const AttentionShape& s) {
  return static_cast<std::size_t>(s.batch_heads) * static_cast<std::size_t>(s.seq) * static_cast<std::size_t>(s.seq);
}

// The shape is checked before the first buffer is sized from it (a negative count would be a huge
// size_t): q_'s initialiser calls this.
std::size_t checked_qk_elements(const AttentionShape& s) {
  if (s.batch_heads <= 0 || s.seq <= 0 || s.head_dim <= 0 || s.head_dim_v < 0) {
    throw std::invalid_argument("Attention: empty shape (batch_heads " + std::to_string(s.batch_heads) + ", seq " +
                                std::to_string(s.seq) + ", head_dim " + std::to_string(s.head_dim) + ", head_dim_v " +
                                std::to_string(s.head_dim_v) + ")");
  }
  return qk_elements(s);
}

}  // namespace

std::size_t Attention::device_bytes(const AttentionShape& shape, bool with_backward) {
  // Forward: Q, K and V, O (and S); the backward adds dQ, dK and dO, dV (and dS).
  const std::size_t per_width = with_backward ? 4 : 2;
  const std::size_t scores = with_backward ? 2 : 1;
  return 2 * (per_width * (qk_elements(shape) + v_elements(shape)) + scores * score_elements(shape));
}

Attention::Attention(const BlasContext& blas, const AttentionShape& shape, bool with_backward)
    : blas_(blas),
      shape_(shape),
      with_backward_(with_backward),
      q_(checked_qk_elements(shape)),
      k_(qk_elements(shape)),
      v_(v_elements(shape)),
      o_(v_elements(shape)),
      scores_(score_elements(shape)),
      dout_(with_backward ? v_elements(shape) : 0),
      dq_(with_backward ? qk_elements(shape) : 0),
      dk_(with_backward ? qk_elements(shape) : 0),
      dv_(with_backward ? v_elements(shape) : 0),
      dscores_(with_backward ? score_elements(shape) : 0) {
  const std::size_t n = qk_elements(shape), nv = v_elements(shape);
  fill_random_bf16(q_.data(), n, kQSeed, kQkAmplitude, blas.stream());
  fill_random_bf16(k_.data(), n, kKSeed, kQkAmplitude, blas.stream());
  fill_random_bf16(v_.data(), nv, kVSeed, 1.0f, blas.stream());
  if (with_backward) fill_random_bf16(dout_.data(), nv, kDoutSeed, 1.0f, blas.stream());
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(blas.stream()));
}

void Attention::gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const std::uint16_t* a, int lda,
                     std::int64_t stride_a, const std::uint16_t* b, int ldb, std::int64_t stride_b, std::uint16_t* c,
                     int ldc, std::int64_t stride_c) {
  const float beta = 0.0f;
  MOESIM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(blas_.blas(), trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                 trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16BF,
                                                 lda, stride_a, b, CUDA_R_16BF, ldb, stride_b, &beta, c, CUDA_R_16BF,
                                                 ldc, stride_c, shape_.batch_heads, CUBLAS_COMPUTE_32F,
                                                 CUBLAS_GEMM_DEFAULT));
}

// Row-major [seq x d] tensors are column-major d x seq to cuBLAS, and a row-major [seq x seq] score
// matrix is its own transpose there; each call below is derived in attention.hpp's terms.
// d is head_dim (Q, K rows), dv value_dim() (V, O rows): a GEMM's k is the dimension it reduces over.
void Attention::forward() {
  const int s = shape_.seq, d = shape_.head_dim, dv = shape_.value_dim();
  const std::int64_t sd = static_cast<std::int64_t>(s) * d, sdv = static_cast<std::int64_t>(s) * dv;
  const std::int64_t ss = static_cast<std::int64_t>(s) * s;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  gemm(true, false, s, s, d, scale, k_.data(), d, sd, q_.data(), d, sd, scores_.data(), s, ss);  // S[i][j] = q_i . k_j
  softmax_forward(scores_.data(), static_cast<std::int64_t>(shape_.batch_heads) * s, s, shape_.causal, blas_.stream());
  gemm(false, false, dv, s, s, 1.0f, v_.data(), dv, sdv, scores_.data(), s, ss, o_.data(), dv, sdv);  // O = P V
}

void Attention::backward() {
  if (!with_backward_) throw std::logic_error("Attention::backward: constructed without backward buffers");
  const int s = shape_.seq, d = shape_.head_dim, dv = shape_.value_dim();
  const std::int64_t sd = static_cast<std::int64_t>(s) * d, sdv = static_cast<std::int64_t>(s) * dv;
  const std::int64_t ss = static_cast<std::int64_t>(s) * s;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const std::int64_t rows = static_cast<std::int64_t>(shape_.batch_heads) * s;
  gemm(false, true, dv, s, s, 1.0f, dout_.data(), dv, sdv, scores_.data(), s, ss, dv_.data(), dv, sdv);  // dV = P^T dO
  gemm(true, false, s, s, dv, 1.0f, v_.data(), dv, sdv, dout_.data(), dv, sdv, dscores_.data(), s, ss);  // dP = dO V^T
  softmax_backward(scores_.data(), dscores_.data(), rows, s, shape_.causal, blas_.stream());
  // dQ = dS K / sqrt(d), dK = dS^T Q / sqrt(d)
  gemm(false, false, d, s, s, scale, k_.data(), d, sd, dscores_.data(), s, ss, dq_.data(), d, sd);
  gemm(false, true, d, s, s, scale, q_.data(), d, sd, dscores_.data(), s, ss, dk_.data(), d, sd);
}

std::vector<float> Attention::head_values(std::uint64_t seed, float amplitude, int head, int width) const {
  const std::size_t n = head_elements(shape_, width);
  const std::size_t first = static_cast<std::size_t>(head) * n;
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = bf16_to_float(float_to_bf16(random_uniform(seed, first + i) * amplitude));
  }
  return out;
}

std::vector<double> Attention::head_row(const DeviceBuffer<std::uint16_t>& t, int head, int row, int width) const {
  const auto d = static_cast<std::size_t>(width);
  const std::size_t first =
      static_cast<std::size_t>(head) * head_elements(shape_, width) + static_cast<std::size_t>(row) * d;
  const std::vector<std::uint16_t> raw = t.download(first, d);
  std::vector<double> out(d);
  for (std::size_t i = 0; i < d; ++i) out[i] = bf16_to_float(raw[i]);
  return out;
}

namespace {

// Rows sampled for the check: the first and last query (the causal mask's extremes), then seeded.
void sample_row(int i, const AttentionShape& s, int& head, int& row) {
  if (i < 2) {
    head = i == 0 ? 0 : s.batch_heads - 1;
    row = i == 0 ? 0 : s.seq - 1;
    return;
  }
  const auto draw = static_cast<std::uint64_t>(i);
  head = static_cast<int>(random_bits(0xa77e, 2 * draw) % static_cast<std::uint64_t>(s.batch_heads));
  row = static_cast<int>(random_bits(0xa77e, 2 * draw + 1) % static_cast<std::uint64_t>(s.seq));
}

}  // namespace

Comparison Attention::check_forward_rows(int rows) {
  o_.fill_bytes(kPoisonByte);
  forward();
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(blas_.stream()));
  const int d = shape_.head_dim, dv = shape_.value_dim();
  std::vector<double> got, want;
  std::vector<double> o_ref(static_cast<std::size_t>(dv));
  for (int i = 0; i < rows; ++i) {
    int head = 0, row = 0;
    sample_row(i, shape_, head, row);
    const auto q = head_values(kQSeed, kQkAmplitude, head, d), k = head_values(kKSeed, kQkAmplitude, head, d);
    const auto v = head_values(kVSeed, 1.0f, head, dv);
    attention_row_reference(q.data(), k.data(), v.data(), nullptr, shape_.seq, d, dv, shape_.causal, row, o_ref.data(),
                            nullptr);
    const auto o = head_row(o_, head, row, dv);
    got.insert(got.end(), o.begin(), o.end());
    want.insert(want.end(), o_ref.begin(), o_ref.end());
  }
  return compare(got, want);
}

Comparison Attention::check_backward_rows(int rows) {
  dq_.fill_bytes(kPoisonByte);
  forward();
  backward();
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(blas_.stream()));
  const int d = shape_.head_dim, dv = shape_.value_dim();
  std::vector<double> got, want;
  std::vector<double> o_ref(static_cast<std::size_t>(dv)), dq_ref(static_cast<std::size_t>(d));
  for (int i = 0; i < rows; ++i) {
    int head = 0, row = 0;
    sample_row(i, shape_, head, row);
    const auto q = head_values(kQSeed, kQkAmplitude, head, d), k = head_values(kKSeed, kQkAmplitude, head, d);
    const auto v = head_values(kVSeed, 1.0f, head, dv), dout = head_values(kDoutSeed, 1.0f, head, dv);
    attention_row_reference(q.data(), k.data(), v.data(), dout.data(), shape_.seq, d, dv, shape_.causal, row,
                            o_ref.data(), dq_ref.data());
    const auto dq = head_row(dq_, head, row, d);
    got.insert(got.end(), dq.begin(), dq.end());
    want.insert(want.end(), dq_ref.begin(), dq_ref.end());
  }
  return compare(got, want);
}

Comparison Attention::check_head(int head, bool backward) {
  o_.fill_bytes(kPoisonByte);
  if (backward) {
    dq_.fill_bytes(kPoisonByte);
    dk_.fill_bytes(kPoisonByte);
    dv_.fill_bytes(kPoisonByte);
  }
  forward();
  if (backward) this->backward();
  MOESIM_CUDA_CHECK(cudaStreamSynchronize(blas_.stream()));
  const int d = shape_.head_dim, dv = shape_.value_dim();
  const auto q = head_values(kQSeed, kQkAmplitude, head, d), k = head_values(kKSeed, kQkAmplitude, head, d);
  const auto v = head_values(kVSeed, 1.0f, head, dv);
  const auto dout = backward ? head_values(kDoutSeed, 1.0f, head, dv) : std::vector<float>{};
  const AttentionHeadReference ref = attention_head_reference(q.data(), k.data(), v.data(),
                                                              backward ? dout.data() : nullptr, shape_.seq, d, dv,
                                                              shape_.causal, backward);
  // Each tensor on its own: O's norm is far smaller than the gradients', and a wrong O must not
  // hide under them. The worst of the four is returned.
  Comparison worst;
  const auto check = [&](const DeviceBuffer<std::uint16_t>& t, const std::vector<double>& r, int width) {
    const std::size_t n = head_elements(shape_, width);
    const std::vector<std::uint16_t> raw = t.download(static_cast<std::size_t>(head) * n, n);
    std::vector<double> got(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) got[i] = bf16_to_float(raw[i]);
    const Comparison c = compare(got, r);
    if (worst.count == 0 || c.nonfinite > worst.nonfinite ||
        (c.nonfinite == worst.nonfinite && c.rel_l2 > worst.rel_l2)) {
      worst = c;
    }
  };
  check(o_, ref.o, dv);
  if (backward) {
    check(dq_, ref.dq, d);
    check(dk_, ref.dk, d);
    check(dv_, ref.dv, dv);
  }
  return worst;
}

}  // namespace moesim::kernels
