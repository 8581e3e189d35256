#include "kernels/reference/attention_ref.hpp"

#include <cmath>
#include <cstddef>

namespace moesim::kernels {
namespace {

std::size_t at(int row, int col, int cols) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) + static_cast<std::size_t>(col);
}

double dot(const float* a, const float* b, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Row `row` of P: the scores q_row . k_j over the query/key head dimension, scaled by its
// 1 / sqrt(dim), masked, through softmax.
void probability_row(const float* q, const float* k, int seq, int dim, bool causal, int row, std::vector<double>& p) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  std::vector<double> x(static_cast<std::size_t>(seq));
  for (int j = 0; j < seq; ++j) {
    x[static_cast<std::size_t>(j)] = scale * dot(q + at(row, 0, dim), k + at(j, 0, dim), dim);
  }
  p.resize(static_cast<std::size_t>(seq));
  softmax_row_reference(x.data(), seq, row, causal, p.data());
}

}  // namespace

void softmax_row_reference(const double* x, int seq, int row, bool causal, double* p) {
  const int last = causal ? row : seq - 1;
  double max = x[0];
  for (int j = 1; j <= last; ++j) max = std::fmax(max, x[j]);
  double sum = 0;
  for (int j = 0; j < seq; ++j) {
    p[j] = j <= last ? std::exp(x[j] - max) : 0.0;
    sum += p[j];
  }
  for (int j = 0; j < seq; ++j) p[j] /= sum;
}

void softmax_backward_row_reference(const double* p, const double* dp, int seq, double* ds) {
  double dot_pdp = 0;
  for (int j = 0; j < seq; ++j) dot_pdp += p[j] * dp[j];
  for (int j = 0; j < seq; ++j) ds[j] = p[j] * (dp[j] - dot_pdp);
}

void attention_row_reference(const float* q, const float* k, const float* v, const float* dout, int seq, int head_dim,
                             int head_dim_v, bool causal, int row, double* o_row, double* dq_row) {
  std::vector<double> p;
  probability_row(q, k, seq, head_dim, causal, row, p);
  for (int d = 0; d < head_dim_v; ++d) o_row[d] = 0;
  for (int j = 0; j < seq; ++j) {
    for (int d = 0; d < head_dim_v; ++d) o_row[d] += p[static_cast<std::size_t>(j)] * v[at(j, d, head_dim_v)];
  }
  if (dq_row == nullptr) return;
  // dP = dout_row . V^T reduces over the value head dimension; dQ = dS K has the query/key one.
  std::vector<double> dp(static_cast<std::size_t>(seq)), ds(static_cast<std::size_t>(seq));
  for (int j = 0; j < seq; ++j) {
    dp[static_cast<std::size_t>(j)] = dot(dout + at(row, 0, head_dim_v), v + at(j, 0, head_dim_v), head_dim_v);
  }
  softmax_backward_row_reference(p.data(), dp.data(), seq, ds.data());
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  for (int d = 0; d < head_dim; ++d) dq_row[d] = 0;
  for (int j = 0; j < seq; ++j) {
    for (int d = 0; d < head_dim; ++d) dq_row[d] += scale * ds[static_cast<std::size_t>(j)] * k[at(j, d, head_dim)];
  }
}

AttentionHeadReference attention_head_reference(const float* q, const float* k, const float* v, const float* dout,
                                                int seq, int head_dim, int head_dim_v, bool causal, bool backward) {
  const std::size_t n = static_cast<std::size_t>(seq) * static_cast<std::size_t>(head_dim);
  const std::size_t nv = static_cast<std::size_t>(seq) * static_cast<std::size_t>(head_dim_v);
  AttentionHeadReference r;
  r.o.assign(nv, 0.0);
  if (backward) {
    r.dq.assign(n, 0.0);
    r.dk.assign(n, 0.0);
    r.dv.assign(nv, 0.0);
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  std::vector<double> p, dp(static_cast<std::size_t>(seq)), ds(static_cast<std::size_t>(seq));
  for (int i = 0; i < seq; ++i) {
    probability_row(q, k, seq, head_dim, causal, i, p);
    for (int j = 0; j < seq; ++j) {
      const double pij = p[static_cast<std::size_t>(j)];
      for (int d = 0; d < head_dim_v; ++d) r.o[at(i, d, head_dim_v)] += pij * v[at(j, d, head_dim_v)];
    }
    if (!backward) continue;
    for (int j = 0; j < seq; ++j) {
      dp[static_cast<std::size_t>(j)] = dot(dout + at(i, 0, head_dim_v), v + at(j, 0, head_dim_v), head_dim_v);
    }
    softmax_backward_row_reference(p.data(), dp.data(), seq, ds.data());
    for (int j = 0; j < seq; ++j) {
      const double dsij = ds[static_cast<std::size_t>(j)];
      const double pij = p[static_cast<std::size_t>(j)];
      for (int d = 0; d < head_dim; ++d) {
        r.dq[at(i, d, head_dim)] += scale * dsij * k[at(j, d, head_dim)];
        r.dk[at(j, d, head_dim)] += scale * dsij * q[at(i, d, head_dim)];
      }
      for (int d = 0; d < head_dim_v; ++d) r.dv[at(j, d, head_dim_v)] += pij * dout[at(i, d, head_dim_v)];
    }
  }
  return r;
}

}  // namespace moesim::kernels
