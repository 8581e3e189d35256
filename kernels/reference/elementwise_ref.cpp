#include "kernels/reference/elementwise_ref.hpp"

#include <cmath>
#include <cstddef>

#include "kernels/numeric.hpp"

namespace moesim::kernels {
namespace {

std::size_t at(std::int64_t row, std::int64_t col, std::int64_t cols) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

double silu_reference(double x) { return x * sigmoid(x); }

void swiglu_forward_reference(const float* in, std::int64_t rows, std::int64_t ffn, double* out) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < ffn; ++j) {
      out[at(r, j, ffn)] = silu_reference(in[at(r, j, 2 * ffn)]) * static_cast<double>(in[at(r, ffn + j, 2 * ffn)]);
    }
  }
}

void swiglu_backward_reference(const float* in, const float* d_out, std::int64_t rows, std::int64_t ffn, double* d_in) {
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < ffn; ++j) {
      const double a = in[at(r, j, 2 * ffn)], b = in[at(r, ffn + j, 2 * ffn)], g = d_out[at(r, j, ffn)];
      const double s = sigmoid(a);
      d_in[at(r, j, 2 * ffn)] = g * b * s * (1.0 + a * (1.0 - s));  // d silu / da = s + a s (1 - s)
      d_in[at(r, ffn + j, 2 * ffn)] = g * a * s;
    }
  }
}

void rmsnorm_forward_reference(const float* x, const float* gamma, std::int64_t rows, std::int64_t hidden, double eps,
                               double* out, double* rstd) {
  for (std::int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (std::int64_t j = 0; j < hidden; ++j) ss += static_cast<double>(x[at(r, j, hidden)]) * x[at(r, j, hidden)];
    const double rs = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
    rstd[r] = rs;
    for (std::int64_t j = 0; j < hidden; ++j) out[at(r, j, hidden)] = x[at(r, j, hidden)] * rs * gamma[j];
  }
}

void rmsnorm_backward_reference(const float* x, const float* gamma, const double* rstd, const float* d_out,
                                std::int64_t rows, std::int64_t hidden, double* d_x, double* d_gamma) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const double rs = rstd[r];
    // d rstd / d x_j = -rstd^3 x_j / hidden, so d_x_j = rstd (g_j dy_j - x_j rstd^2 sum_k(g_k dy_k x_k) / hidden).
    double dot = 0;
    for (std::int64_t j = 0; j < hidden; ++j) {
      const std::size_t i = at(r, j, hidden);
      dot += static_cast<double>(gamma[j]) * d_out[i] * x[i];
      d_gamma[j] += static_cast<double>(d_out[i]) * x[i] * rs;
    }
    const double k = rs * rs * dot / static_cast<double>(hidden);
    for (std::int64_t j = 0; j < hidden; ++j) {
      const std::size_t i = at(r, j, hidden);
      d_x[i] = rs * (static_cast<double>(gamma[j]) * d_out[i] - x[i] * k);
    }
  }
}

void adam_reference(float* master, float* m, float* v, const float* grad, std::uint16_t* weight, std::int64_t n,
                    const AdamParams& p) {
  const double b1 = p.beta1, b2 = p.beta2, lr = p.lr;
  const double bc1 = 1.0 - std::pow(b1, p.step), bc2 = 1.0 - std::pow(b2, p.step);
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = grad[i];
    const double mi = b1 * m[i] + (1.0 - b1) * g;
    const double vi = b2 * v[i] + (1.0 - b2) * g * g;
    const double update = (mi / bc1) / (std::sqrt(vi / bc2) + static_cast<double>(p.eps));
    // Decoupled decay: the decay scales the weight, it is not added to the gradient.
    const double w = master[i] * (1.0 - lr * static_cast<double>(p.weight_decay)) - lr * update;
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
    master[i] = static_cast<float>(w);
    weight[i] = float_to_bf16(master[i]);
  }
}

void dropout_forward_reference(const std::uint16_t* in, std::int64_t n, float p, std::uint64_t seed,
                               std::uint8_t* mask, std::uint16_t* out, std::int64_t first) {
  const float scale = dropout_scale(p);
  for (std::int64_t i = 0; i < n; ++i) {
    const bool keep = dropout_keep(seed, static_cast<std::uint64_t>(first + i), p);
    mask[i] = keep ? 1 : 0;
    out[i] = keep ? float_to_bf16(bf16_to_float(in[i]) * scale) : std::uint16_t{0};
  }
}

void dropout_backward_reference(const std::uint16_t* d_out, const std::uint8_t* mask, std::int64_t n, float p,
                                std::uint16_t* d_in) {
  const float scale = dropout_scale(p);
  for (std::int64_t i = 0; i < n; ++i) {
    d_in[i] = mask[i] != 0 ? float_to_bf16(bf16_to_float(d_out[i]) * scale) : std::uint16_t{0};
  }
}

}  // namespace moesim::kernels
