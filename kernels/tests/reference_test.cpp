// The CPU references the GPU kernels are checked against, checked themselves against independent
// computations (a full sort, a nearest-value search, finite differences, identities and bounds).
// Plain C++: runs on any machine (label "unit").
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/numeric.hpp"
#include "kernels/reference/attention_ref.hpp"
#include "kernels/reference/cast_ref.hpp"
#include "kernels/reference/compare.hpp"
#include "kernels/reference/elementwise_ref.hpp"
#include "kernels/reference/gemm_ref.hpp"
#include "kernels/reference/permute_ref.hpp"
#include "kernels/reference/router_ref.hpp"
#include "kernels/reference/stats.hpp"

using namespace moesim::kernels;

namespace {

std::vector<float> random_floats(std::size_t n, std::uint64_t seed, float amplitude) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = random_uniform(seed, i) * amplitude;
  return v;
}

// E4M3 by search: the nearest of the 127 finite non-negative codes, ties to the even code, and
// saturation at 448: independent of float_to_e4m3's bit arithmetic.
std::uint8_t e4m3_by_search(float x) {
  const float a = std::fabs(x);
  std::uint8_t best = 0;
  double best_d = 1e300;
  for (int c = 0; c <= 0x7e; ++c) {
    const double d = std::fabs(static_cast<double>(e4m3_to_float(static_cast<std::uint8_t>(c))) - a);
    if (d < best_d || (d == best_d && (c & 1) == 0)) {
      best_d = d;
      best = static_cast<std::uint8_t>(c);
    }
  }
  return static_cast<std::uint8_t>(best | (std::signbit(x) ? 0x80 : 0));
}

}  // namespace

TEST_CASE("random_uniform is in [-1, 1), varied, and the same for the same (seed, index)") {
  double sum = 0;
  float lo = 1, hi = -1;
  for (std::uint64_t i = 0; i < 100000; ++i) {
    const float u = random_uniform(7, i);
    CHECK(u >= -1.0f);
    CHECK(u < 1.0f);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
  }
  CHECK(std::fabs(sum / 100000) < 0.01);
  CHECK(lo < -0.99f);
  CHECK(hi > 0.99f);
  CHECK(random_uniform(7, 12345) == random_uniform(7, 12345));
  CHECK(random_uniform(7, 12345) != random_uniform(8, 12345));
}

TEST_CASE("bf16: round to nearest even, NaN kept") {
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(1.0f + 0x1p-8f) == 0x3f80);        // tie, down to even
  CHECK(float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);    // tie, up to even
  CHECK(float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81);
  CHECK(float_to_bf16(-2.5f) == 0xc020);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
  for (const float f : random_floats(10000, 3, 100.0f)) {
    const float r = bf16_to_float(float_to_bf16(f));
    CHECK(std::fabs(r - f) <= std::fabs(f) * 0x1p-8f);
  }
}

TEST_CASE("e4m3: every code round-trips; conversion matches a nearest-value search") {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    if ((c & 0x7f) == 0x7f) {
      CHECK(std::isnan(e4m3_to_float(code)));
      continue;
    }
    CHECK(float_to_e4m3(e4m3_to_float(code)) == code);
  }
  CHECK(e4m3_to_float(0x7e) == 448.0f);
  CHECK(e4m3_to_float(0x01) == 0x1p-9f);
  CHECK(e4m3_to_float(0x08) == 0x1p-6f);
  CHECK(float_to_e4m3(1000.0f) == 0x7e);
  CHECK(float_to_e4m3(-1e30f) == 0xfe);
  CHECK(float_to_e4m3(INFINITY) == 0x7e);
  CHECK(float_to_e4m3(std::nanf("")) == 0x7f);
  CHECK(float_to_e4m3(0x1p-10f) == 0x00);  // half the smallest subnormal: tie to even zero
  CHECK(float_to_e4m3(0x1.8p-10f) == 0x01);
  // Midpoints between neighbouring codes go to the even one.
  for (int c = 0; c < 0x7e; ++c) {
    const float mid = (e4m3_to_float(static_cast<std::uint8_t>(c)) + e4m3_to_float(static_cast<std::uint8_t>(c + 1))) / 2;
    CHECK(float_to_e4m3(mid) == ((c & 1) ? c + 1 : c));
  }
  for (const float f : random_floats(20000, 11, 500.0f)) CHECK(float_to_e4m3(f) == e4m3_by_search(f));
  for (const float f : random_floats(20000, 12, 0.02f)) CHECK(float_to_e4m3(f) == e4m3_by_search(f));  // subnormals
}

TEST_CASE("e2m1 decodes the eight magnitudes and the sign") {
  const float want[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    CHECK(e2m1_to_float(static_cast<std::uint8_t>(c)) == want[c]);
    CHECK(e2m1_to_float(static_cast<std::uint8_t>(c | 8)) == -want[c]);
  }
}

TEST_CASE("stats: percentiles interpolate linearly; spread is p90 - p10") {
  std::vector<double> v(11);
  std::iota(v.begin(), v.end(), 1.0);
  std::reverse(v.begin(), v.end());
  const Summary s = summarize(v);
  CHECK(s.median == 6.0);
  CHECK(s.p10 == doctest::Approx(2.0));
  CHECK(s.p90 == doctest::Approx(10.0));
  CHECK(s.spread() == doctest::Approx(8.0));
  CHECK(s.min == 1.0);
  CHECK(s.repeats == 11);
  CHECK(summarize({4.0, 1.0}).median == 2.5);
  CHECK(summarize({}).repeats == 0);
}

TEST_CASE("compare: relative L2, the worst element, and non-finite values never pass") {
  const Comparison c = compare({1.0, 2.0, 3.1}, {1.0, 2.0, 3.0});
  CHECK(c.rel_l2 == doctest::Approx(0.1 / std::sqrt(14.0)));
  CHECK(c.worst == 2);
  CHECK(c.ok(0.03));
  CHECK_FALSE(c.ok(0.01));
  const Comparison n = compare({NAN, 2.0}, {1.0, 2.0});
  CHECK(n.nonfinite == 1);
  CHECK_FALSE(n.ok(1.0));
  CHECK_THROWS_AS(require_close(n, 1.0, "x"), std::runtime_error);
  CHECK_THROWS_AS((void)compare({1.0}, {1.0, 2.0}), std::invalid_argument);
}

TEST_CASE("router: top-k equals a full sort's first k, ties to the lower expert; probabilities") {
  for (const int experts : {1, 8, 61, 64, 256, 512}) {
    for (const int k : {1, 2, 8, 16}) {
      if (k > experts) continue;
      for (int t = 0; t < 20; ++t) {
        auto logits = random_floats(static_cast<std::size_t>(experts), 100 + static_cast<std::uint64_t>(t), 4.0f);
        if (experts >= 8) logits[3] = logits[5] = 10.0f;  // a tie at the top
        std::vector<std::int32_t> idx(static_cast<std::size_t>(k));
        std::vector<float> p(static_cast<std::size_t>(k));
        router_reference_row(logits.data(), experts, k, RouterScoring::kSoftmax, idx.data(), p.data());
        CHECK(idx == topk_by_full_sort(logits.data(), experts, k));
        if (experts >= 8) CHECK(idx[0] == 3);
        for (int r = 1; r < k; ++r) CHECK(p[static_cast<std::size_t>(r)] <= p[static_cast<std::size_t>(r - 1)]);
        router_reference_row(logits.data(), experts, k, RouterScoring::kSigmoid, idx.data(), p.data());
        CHECK(idx == topk_by_full_sort(logits.data(), experts, k));
        CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0));  // normalised over the top-k
      }
    }
  }
  // Softmax over all experts: with k = experts the probabilities are the whole softmax.
  const auto logits = random_floats(64, 9, 3.0f);
  std::vector<std::int32_t> idx(64);
  std::vector<float> p(64);
  router_reference_row(logits.data(), 64, 64, RouterScoring::kSoftmax, idx.data(), p.data());
  CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("permute: the map groups copies by expert in token order; permute then unpermute is the identity") {
  const int tokens = 50, experts = 7;
  for (const int k : {1, 3}) {
    std::vector<std::int32_t> choice(static_cast<std::size_t>(tokens * k));
    for (std::size_t i = 0; i < choice.size(); ++i) choice[i] = static_cast<std::int32_t>((i * 5 + i / 3) % experts);
    const RoutingMap map = build_routing_map(choice, tokens, k, experts);
    CHECK(std::accumulate(map.tokens_per_expert.begin(), map.tokens_per_expert.end(), 0) == tokens * k);
    for (std::size_t copy = 0; copy < choice.size(); ++copy) {
      const std::int32_t row = map.permuted_row[copy];
      CHECK(map.permuted_token[static_cast<std::size_t>(row)] == static_cast<std::int32_t>(copy / static_cast<std::size_t>(k)));
    }
    // Rows of one expert are contiguous and in ascending token order.
    for (std::size_t r = 1; r < map.permuted_token.size(); ++r) {
      const auto expert_of_row = [&](std::size_t row) {
        for (std::size_t c = 0; c < choice.size(); ++c) {
          if (map.permuted_row[c] == static_cast<std::int32_t>(row)) return choice[c];
        }
        return -1;
      };
      const int a = expert_of_row(r - 1), b = expert_of_row(r);
      CHECK(a <= b);
      if (a == b) CHECK(map.permuted_token[r - 1] < map.permuted_token[r]);
    }
    const int hidden = 24;
    std::vector<std::uint16_t> x(static_cast<std::size_t>(tokens * hidden)), permuted(static_cast<std::size_t>(tokens * k * hidden));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = random_bf16(77, i);
    permute_reference(x.data(), hidden, map, permuted.data());
    // Weights summing to one give each token back exactly (k = 1: weight 1; k = 3: 1/2, 1/4, 1/4).
    std::vector<float> probs(choice.size(), 1.0f);
    for (std::size_t c = 0; k == 3 && c < probs.size(); ++c) probs[c] = c % 3 == 0 ? 0.5f : 0.25f;
    std::vector<double> row(static_cast<std::size_t>(hidden));
    for (int t = 0; t < tokens; ++t) {
      unpermute_reference_row(permuted.data(), hidden, map, probs.data(), t, row.data());
      for (int c = 0; c < hidden; ++c) CHECK(row[static_cast<std::size_t>(c)] == bf16_to_float(x[static_cast<std::size_t>(t * hidden + c)]));
    }
  }
  CHECK_THROWS_AS((void)build_routing_map({0, 9}, 2, 1, 4), std::invalid_argument);
  CHECK_THROWS_AS((void)build_routing_map({0}, 2, 1, 4), std::invalid_argument);
}

TEST_CASE("softmax rows sum to one, masked columns are zero; the backward sums to zero") {
  const int seq = 33;
  const auto xf = random_floats(seq, 21, 5.0f);
  const std::vector<double> x(xf.begin(), xf.end());
  std::vector<double> p(seq), ds(seq);
  for (const bool causal : {false, true}) {
    for (const int row : {0, 7, seq - 1}) {
      softmax_row_reference(x.data(), seq, row, causal, p.data());
      CHECK(std::accumulate(p.begin(), p.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-12));
      for (int j = 0; j < seq; ++j) {
        if (causal && j > row) CHECK(p[static_cast<std::size_t>(j)] == 0.0);
        else CHECK(p[static_cast<std::size_t>(j)] > 0.0);
      }
      softmax_backward_row_reference(p.data(), x.data(), seq, ds.data());
      CHECK(std::accumulate(ds.begin(), ds.end(), 0.0) == doctest::Approx(0.0).epsilon(1e-12));
    }
  }
}

TEST_CASE("attention: rows agree with the whole head; gradients agree with finite differences") {
  const int seq = 6;
  // (head_dim, head_dim_v): the square case, then value heads narrower and wider than the query/key ones.
  // A plain pair, not a structured binding: clang 14 cannot capture a binding in a lambda.
  for (const auto& dims : {std::pair{4, 4}, std::pair{5, 3}, std::pair{2, 7}}) {
    const int dim = dims.first, dim_v = dims.second;
    CAPTURE(dim);
    CAPTURE(dim_v);
    const auto n = static_cast<std::size_t>(seq * dim), nv = static_cast<std::size_t>(seq * dim_v);
    const auto q = random_floats(n, 31, 1.5f), k = random_floats(n, 32, 1.5f);
    const auto v = random_floats(nv, 33, 1.0f), dout = random_floats(nv, 34, 1.0f);
    for (const bool causal : {true, false}) {
      const AttentionHeadReference ref =
          attention_head_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, dim_v, causal, true);
      REQUIRE(ref.o.size() == nv);
      REQUIRE(ref.dq.size() == n);
      REQUIRE(ref.dk.size() == n);
      REQUIRE(ref.dv.size() == nv);
      std::vector<double> o(static_cast<std::size_t>(dim_v)), dq(static_cast<std::size_t>(dim));
      for (int i = 0; i < seq; ++i) {
        attention_row_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, dim_v, causal, i, o.data(),
                                dq.data());
        for (int d = 0; d < dim_v; ++d) {
          CHECK(o[static_cast<std::size_t>(d)] == doctest::Approx(ref.o[static_cast<std::size_t>(i * dim_v + d)]));
        }
        for (int d = 0; d < dim; ++d) {
          CHECK(dq[static_cast<std::size_t>(d)] == doctest::Approx(ref.dq[static_cast<std::size_t>(i * dim + d)]));
        }
      }
      // L = sum(O * dout): dL/dX by central differences for X = Q, K, V.
      const auto loss = [&](const std::vector<float>& qq, const std::vector<float>& kk, const std::vector<float>& vv) {
        const auto r =
            attention_head_reference(qq.data(), kk.data(), vv.data(), nullptr, seq, dim, dim_v, causal, false);
        double l = 0;
        for (std::size_t i = 0; i < r.o.size(); ++i) l += r.o[i] * dout[i];
        return l;
      };
      const float h = 1e-3f;
      const auto derivative = [&](const std::vector<float>& x, std::size_t i, auto&& loss_of) {
        auto plus = x, minus = x;
        plus[i] += h;
        minus[i] -= h;
        return (loss_of(plus) - loss_of(minus)) / (static_cast<double>(plus[i]) - minus[i]);
      };
      const auto of_q = [&](const std::vector<float>& x) { return loss(x, k, v); };
      const auto of_k = [&](const std::vector<float>& x) { return loss(q, x, v); };
      const auto of_v = [&](const std::vector<float>& x) { return loss(q, k, x); };
      for (const std::size_t i : {std::size_t{0}, std::size_t{9} % n, n - 1}) {
        CHECK(ref.dq[i] == doctest::Approx(derivative(q, i, of_q)).epsilon(1e-3));
        CHECK(ref.dk[i] == doctest::Approx(derivative(k, i, of_k)).epsilon(1e-3));
      }
      for (const std::size_t i : {std::size_t{0}, std::size_t{9} % nv, nv - 1}) {
        CHECK(ref.dv[i] == doctest::Approx(derivative(v, i, of_v)).epsilon(1e-3));
      }
    }
  }
}

TEST_CASE("attention: with head_dim_v == head_dim the reference gives the square one's values") {
  // Fingerprints (sums weighted by random_uniform(75, i)) of O, dQ, dK, dV from the reference as it
  // was before head_dim_v existed, at seq 5, head_dim 3: causal, then not.
  const double want[2][4] = {{0.20903125174989709, 0.02521714171231049, 0.064407413429607194, 0.68698870677740265},
                             {0.6001859617319083, -0.027035361873134465, 0.039074813831443345, 0.25207708517688149}};
  const int seq = 5, dim = 3;
  const auto q = random_floats(15, 71, 1.5f), k = random_floats(15, 72, 1.5f);
  const auto v = random_floats(15, 73, 1.0f), dout = random_floats(15, 74, 1.0f);
  const auto fingerprint = [](const std::vector<double>& t) {
    double s = 0;
    for (std::size_t i = 0; i < t.size(); ++i) s += t[i] * random_uniform(75, i);
    return s;
  };
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    const auto r = attention_head_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, dim, causal, true);
    const double(&w)[4] = want[causal ? 0 : 1];
    CHECK(fingerprint(r.o) == doctest::Approx(w[0]).epsilon(1e-12));
    CHECK(fingerprint(r.dq) == doctest::Approx(w[1]).epsilon(1e-12));
    CHECK(fingerprint(r.dk) == doctest::Approx(w[2]).epsilon(1e-12));
    CHECK(fingerprint(r.dv) == doctest::Approx(w[3]).epsilon(1e-12));
    // The overload without head_dim_v is the same call.
    const auto square = attention_head_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, causal, true);
    CHECK(square.o == r.o);
    CHECK(square.dq == r.dq);
    CHECK(square.dk == r.dk);
    CHECK(square.dv == r.dv);
    std::vector<double> o(3), dq(3), o_sq(3), dq_sq(3);
    attention_row_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, dim, causal, 2, o.data(), dq.data());
    attention_row_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, causal, 2, o_sq.data(), dq_sq.data());
    CHECK(o == o_sq);
    CHECK(dq == dq_sq);
  }
}

TEST_CASE("attention: value columns are independent; O, dV split by column and dQ, dK sum over columns") {
  // O = P V and dV = P^T dO act on each column of V and dO alone; dP = dO V^T (hence dS, dQ, dK) is
  // linear in the pairs of columns: the reference with head_dim_v = 3 equals three with head_dim_v = 1.
  const int seq = 7, dim = 4, dim_v = 3;
  const auto n = static_cast<std::size_t>(seq * dim);
  const auto q = random_floats(n, 91, 1.5f), k = random_floats(n, 92, 1.5f);
  const auto v = random_floats(static_cast<std::size_t>(seq * dim_v), 93, 1.0f);
  const auto dout = random_floats(static_cast<std::size_t>(seq * dim_v), 94, 1.0f);
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    const auto whole =
        attention_head_reference(q.data(), k.data(), v.data(), dout.data(), seq, dim, dim_v, causal, true);
    std::vector<double> dq(n, 0.0), dk(n, 0.0);
    for (int c = 0; c < dim_v; ++c) {
      std::vector<float> vc(static_cast<std::size_t>(seq)), dc(static_cast<std::size_t>(seq));
      for (int j = 0; j < seq; ++j) {
        vc[static_cast<std::size_t>(j)] = v[static_cast<std::size_t>(j * dim_v + c)];
        dc[static_cast<std::size_t>(j)] = dout[static_cast<std::size_t>(j * dim_v + c)];
      }
      const auto col = attention_head_reference(q.data(), k.data(), vc.data(), dc.data(), seq, dim, 1, causal, true);
      for (int j = 0; j < seq; ++j) {
        const auto at = static_cast<std::size_t>(j * dim_v + c);
        CHECK(col.o[static_cast<std::size_t>(j)] == doctest::Approx(whole.o[at]).epsilon(1e-12));
        CHECK(col.dv[static_cast<std::size_t>(j)] == doctest::Approx(whole.dv[at]).epsilon(1e-12));
      }
      for (std::size_t i = 0; i < n; ++i) {
        dq[i] += col.dq[i];
        dk[i] += col.dk[i];
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      CHECK(dq[i] == doctest::Approx(whole.dq[i]).epsilon(1e-12));
      CHECK(dk[i] == doctest::Approx(whole.dk[i]).epsilon(1e-12));
    }
  }
}

TEST_CASE("attention: a hand case with value head dimension 1") {
  // head_dim 2, head_dim_v 1, seq 3. Every key row is (0.5, 0.5), so a query's scores are equal
  // and P is uniform over the visible keys: 1/3 each, or 1/(i+1) under the causal mask. With
  // V = (1, 2, 3) and dO = (1, 2, 3): O_i is the mean of the visible V, dV_j = sum_i P_ij dO_i,
  // dS_ij = P_ij dO_i (V_j - O_i), dQ = dS K / sqrt(2) = 0 (dS's rows sum to 0, K's rows are equal),
  // dK_j = sum_i dS_ij Q_i / sqrt(2) with Q = ((1, 0), (0, 1), (1, 1)). The scale is 1/sqrt(head_dim),
  // not 1/sqrt(head_dim_v) = 1.
  const std::vector<float> q = {1, 0, 0, 1, 1, 1}, k = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  const std::vector<float> v = {1, 2, 3}, dout = {1, 2, 3};
  const double r = 1.0 / std::sqrt(2.0);
  // Not causal: O = 2 everywhere, dV_j = (1 + 2 + 3) / 3 = 2, dS_ij = dO_i (V_j - 2) / 3, so
  // dK_j = (V_j - 2) / 3 * sum_i dO_i Q_i / sqrt(2) = (V_j - 2) / 3 * (4, 5) / sqrt(2).
  // Causal: O = (1, 1.5, 2), dV = (1 + 1 + 1, 1 + 1, 1) = (3, 2, 1), dS rows (0), (-0.5, 0.5),
  // (-1, 0, 1), so dK = ((-1, -1.5), (0, 0.5), (1, 1)) / sqrt(2).
  const std::vector<double> want_o[2] = {{2, 2, 2}, {1, 1.5, 2}};
  const std::vector<double> want_dv[2] = {{2, 2, 2}, {3, 2, 1}};
  const std::vector<double> want_dk[2] = {{-4 * r / 3, -5 * r / 3, 0, 0, 4 * r / 3, 5 * r / 3},
                                          {-r, -1.5 * r, 0, 0.5 * r, r, r}};
  for (const bool causal : {false, true}) {
    CAPTURE(causal);
    const int c = causal ? 1 : 0;
    const auto ref = attention_head_reference(q.data(), k.data(), v.data(), dout.data(), 3, 2, 1, causal, true);
    REQUIRE(ref.o.size() == 3);
    REQUIRE(ref.dv.size() == 3);
    REQUIRE(ref.dq.size() == 6);
    REQUIRE(ref.dk.size() == 6);
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(ref.o[i] == doctest::Approx(want_o[c][i]).epsilon(1e-12));
      CHECK(ref.dv[i] == doctest::Approx(want_dv[c][i]).epsilon(1e-12));
    }
    for (std::size_t i = 0; i < 6; ++i) {
      CHECK(ref.dq[i] == doctest::Approx(0.0).epsilon(1e-12));
      CHECK(ref.dk[i] == doctest::Approx(want_dk[c][i]).epsilon(1e-12));
    }
    double o_row = 0, dq_row[2] = {1, 1};
    attention_row_reference(q.data(), k.data(), v.data(), dout.data(), 3, 2, 1, causal, 1, &o_row, dq_row);
    CHECK(o_row == doctest::Approx(want_o[c][1]).epsilon(1e-12));
    CHECK(dq_row[0] == doctest::Approx(0.0).epsilon(1e-12));
    CHECK(dq_row[1] == doctest::Approx(0.0).epsilon(1e-12));
  }
}

TEST_CASE("cast: amax, scale, and the round trip within half an E4M3 step") {
  std::vector<std::uint16_t> x(4096);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = random_bf16(41, i);
  x[100] = float_to_bf16(-3.0f);  // the largest magnitude, negative
  const float amax = amax_reference(x.data(), x.size());
  CHECK(amax == 3.0f);
  const float scale = fp8_scale_from_amax(amax);
  CHECK(scale == 448.0f / 3.0f);
  CHECK(fp8_scale_from_amax(0.0f) == 1.0f);
  CHECK(fp8_scale_from_amax(INFINITY) == 1.0f);
  CHECK(cast_fp8_reference(x[100], scale) == 0xfe);  // -amax maps to -448
  for (const std::uint16_t b : x) {
    const float v = bf16_to_float(b);
    const float back = e4m3_to_float(cast_fp8_reference(b, scale)) / scale;
    if (std::fabs(v * scale) >= 0x1p-6f) {
      CHECK(std::fabs(back - v) <= std::fabs(v) * 0x1p-4f);  // normal range: 3 mantissa bits
    } else {
      CHECK(std::fabs(back - v) <= 0x1p-10f / scale);  // subnormal range: half the 2^-9 step
    }
  }
  std::vector<std::uint16_t> with_nan = {float_to_bf16(1.0f), float_to_bf16(std::nanf(""))};
  CHECK(std::isnan(amax_reference(with_nan.data(), with_nan.size())));
  CHECK(amax_reference(nullptr, 0) == 0.0f);
}

TEST_CASE("gemm reference: operands in range, and an entry is the dot product of its two rows") {
  for (std::uint64_t i = 0; i < 5000; ++i) {
    CHECK(std::fabs(gemm_operand_value(GemmPrecision::kFp8, false, i)) <= kFp8InputAmplitude);
    CHECK(std::fabs(gemm_operand_value(GemmPrecision::kFp8, true, i)) <= kFp8WeightAmplitude);
    CHECK(std::fabs(gemm_operand_value(GemmPrecision::kNvfp4, true, i)) <= 6.0f);
    CHECK(std::fabs(gemm_operand_value(GemmPrecision::kBf16, true, i)) <= 1.0f);
  }
  CHECK(gemm_operand_scale(GemmPrecision::kFp8, false) == 1.0f / kFp8InputAmplitude);
  CHECK(gemm_operand_scale(GemmPrecision::kBf16, false) == 1.0f);
  const std::int64_t k = 40;
  for (const GemmPrecision p : {GemmPrecision::kBf16, GemmPrecision::kFp8, GemmPrecision::kMxfp8, GemmPrecision::kNvfp4}) {
    double want = 0;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      want += static_cast<double>(gemm_operand_value(p, false, static_cast<std::uint64_t>(3 * k + kk))) *
              gemm_operand_value(p, true, static_cast<std::uint64_t>(5 * k + kk));
    }
    want *= static_cast<double>(gemm_operand_scale(p, false)) * gemm_operand_scale(p, true);
    CHECK(gemm_reference_entry(p, k, 3, 5) == doctest::Approx(want));
    CHECK(want != 0.0);
  }
  CHECK(precision_name(GemmPrecision::kMxfp8) == "mxfp8");
}

TEST_CASE("silu and swiglu: known values; the backward equals finite differences of the forward") {
  CHECK(silu_reference(0.0) == 0.0);
  CHECK(silu_reference(1.0) == doctest::Approx(0.7310585786300049));
  CHECK(silu_reference(-1.0) == doctest::Approx(-0.2689414213699951));
  CHECK(silu_reference(40.0) == doctest::Approx(40.0));
  CHECK(std::fabs(silu_reference(-40.0)) < 1e-15);
  const std::int64_t rows = 3, ffn = 5;
  auto in = random_floats(static_cast<std::size_t>(rows * 2 * ffn), 51, 4.0f);
  const auto dout = random_floats(static_cast<std::size_t>(rows * ffn), 52, 1.0f);
  std::vector<double> out(static_cast<std::size_t>(rows * ffn)), d_in(in.size());
  swiglu_forward_reference(in.data(), rows, ffn, out.data());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t j = 0; j < ffn; ++j) {
      const double a = in[static_cast<std::size_t>(r * 2 * ffn + j)];
      const double b = in[static_cast<std::size_t>(r * 2 * ffn + ffn + j)];
      const double sigmoid = 0.5 * (1.0 + std::tanh(a / 2));  // the logistic function by another formula
      CHECK(out[static_cast<std::size_t>(r * ffn + j)] == doctest::Approx(a * sigmoid * b).epsilon(1e-12));
    }
  }
  // L = sum(out * d_out): dL/d_in by central differences, every input.
  const auto loss = [&](const std::vector<float>& x) {
    std::vector<double> o(static_cast<std::size_t>(rows * ffn));
    swiglu_forward_reference(x.data(), rows, ffn, o.data());
    double l = 0;
    for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * dout[i];
    return l;
  };
  swiglu_backward_reference(in.data(), dout.data(), rows, ffn, d_in.data());
  for (std::size_t i = 0; i < in.size(); ++i) {
    auto plus = in, minus = in;
    plus[i] += 1e-3f;
    minus[i] -= 1e-3f;
    const double h = static_cast<double>(plus[i]) - minus[i];
    CHECK(d_in[i] == doctest::Approx((loss(plus) - loss(minus)) / h).epsilon(1e-5));
  }
}

TEST_CASE("rmsnorm: rows come out with rms |gamma|; the backward equals finite differences of the forward") {
  const std::int64_t rows = 4, hidden = 64;
  const auto x = random_floats(static_cast<std::size_t>(rows * hidden), 61, 3.0f);
  std::vector<double> out(x.size()), rstd(static_cast<std::size_t>(rows));
  const auto rms = [&](std::int64_t r, const std::vector<float>& gamma) {
    double s = 0;
    for (std::int64_t j = 0; j < hidden; ++j) {
      const double y = out[static_cast<std::size_t>(r * hidden + j)] / gamma[static_cast<std::size_t>(j)];
      s += y * y;
    }
    return std::sqrt(s / static_cast<double>(hidden));
  };
  for (const float g : {2.5f, -0.5f}) {
    const std::vector<float> gamma(static_cast<std::size_t>(hidden), g);
    rmsnorm_forward_reference(x.data(), gamma.data(), rows, hidden, 1e-6, out.data(), rstd.data());
    for (std::int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (std::int64_t j = 0; j < hidden; ++j) s += std::pow(out[static_cast<std::size_t>(r * hidden + j)], 2);
      CHECK(std::sqrt(s / static_cast<double>(hidden)) == doctest::Approx(std::fabs(g)).epsilon(1e-6));
    }
  }
  // A varying gamma: out / gamma has rms 1 (eps 0), and scaling x changes nothing but rstd.
  auto gamma = random_floats(static_cast<std::size_t>(hidden), 62, 1.0f);
  for (float& g : gamma) g += std::copysign(0.5f, g);  // away from zero: out / gamma stays well conditioned
  rmsnorm_forward_reference(x.data(), gamma.data(), rows, hidden, 0.0, out.data(), rstd.data());
  const std::vector<double> out1 = out, rstd1 = rstd;
  for (std::int64_t r = 0; r < rows; ++r) CHECK(rms(r, gamma) == doctest::Approx(1.0).epsilon(1e-12));
  std::vector<float> x4 = x;
  for (float& v : x4) v *= 4.0f;  // exact in float
  rmsnorm_forward_reference(x4.data(), gamma.data(), rows, hidden, 0.0, out.data(), rstd.data());
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == doctest::Approx(out1[i]).epsilon(1e-12));
  for (std::size_t r = 0; r < rstd.size(); ++r) CHECK(rstd[r] == doctest::Approx(rstd1[r] / 4).epsilon(1e-12));

  // L = sum(out * d_out): dL/dx and dL/dgamma by central differences; d_gamma adds to what it held.
  const std::int64_t br = 3, bh = 8;
  const double eps = 1e-2;  // large enough that a missing eps would show
  auto bx = random_floats(static_cast<std::size_t>(br * bh), 63, 2.0f);
  auto bg = random_floats(static_cast<std::size_t>(bh), 64, 1.5f);
  const auto dout = random_floats(bx.size(), 65, 1.0f);
  const auto loss = [&](const std::vector<float>& xx, const std::vector<float>& gg) {
    std::vector<double> o(xx.size()), rs(static_cast<std::size_t>(br));
    rmsnorm_forward_reference(xx.data(), gg.data(), br, bh, eps, o.data(), rs.data());
    double l = 0;
    for (std::size_t i = 0; i < o.size(); ++i) l += o[i] * dout[i];
    return l;
  };
  std::vector<double> o(bx.size()), rs(static_cast<std::size_t>(br)), dx(bx.size()), dg(bg.size(), 0.5);
  rmsnorm_forward_reference(bx.data(), bg.data(), br, bh, eps, o.data(), rs.data());
  rmsnorm_backward_reference(bx.data(), bg.data(), rs.data(), dout.data(), br, bh, dx.data(), dg.data());
  for (std::size_t i = 0; i < bx.size(); ++i) {
    auto plus = bx, minus = bx;
    plus[i] += 1e-3f;
    minus[i] -= 1e-3f;
    const double h = static_cast<double>(plus[i]) - minus[i];
    CHECK(dx[i] == doctest::Approx((loss(plus, bg) - loss(minus, bg)) / h).epsilon(1e-5));
  }
  for (std::size_t j = 0; j < bg.size(); ++j) {
    auto plus = bg, minus = bg;
    plus[j] += 1e-3f;
    minus[j] -= 1e-3f;
    const double h = static_cast<double>(plus[j]) - minus[j];
    CHECK(dg[j] - 0.5 == doctest::Approx((loss(bx, plus) - loss(bx, minus)) / h).epsilon(1e-5));
  }
}

TEST_CASE("adam: one step on known scalars equals the hand-computed value") {
  // Step 1 from m = v = 0: m = 0.1 g = 0.05, v = 0.05 g^2 = 0.0125, bias-corrected m^ = g = 0.5 and
  // v^ = g^2 = 0.25, so p = 1 * (1 - 0.1 * 0.1) - 0.1 * 0.5 / (0.5 + 1e-8) = 0.890000002.
  float p = 1.0f, m = 0.0f, v = 0.0f;
  const float g = 0.5f;
  std::uint16_t w = 0;
  AdamParams params;
  params.lr = 0.1f;
  adam_reference(&p, &m, &v, &g, &w, 1, params);
  CHECK(m == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(v == doctest::Approx(0.0125).epsilon(1e-6));
  CHECK(p == doctest::Approx(0.890000002).epsilon(1e-6));
  CHECK(w == float_to_bf16(p));
  // Step 3, no decay: m = 0.9 * 0.02 + 0.1 * -0.2 = -0.002, v = 0.95 * 0.001 + 0.05 * 0.04 = 0.00295,
  // m^ = -0.002 / (1 - 0.9^3) = -0.0073800738, v^ = 0.00295 / (1 - 0.95^3) = 0.0206836109,
  // p = 0.5 + 0.01 * 0.0073800738 / (sqrt(v^) = 0.1438179782) = 0.5005131537.
  p = 0.5f, m = 0.02f, v = 0.001f;
  const float g3 = -0.2f;
  params = AdamParams{};
  params.lr = 0.01f;
  params.weight_decay = 0.0f;
  params.step = 3;
  adam_reference(&p, &m, &v, &g3, &w, 1, params);
  CHECK(m == doctest::Approx(-0.002).epsilon(1e-5));
  CHECK(v == doctest::Approx(0.00295).epsilon(1e-6));
  CHECK(p == doctest::Approx(0.5005131537).epsilon(1e-7));
  // A zero gradient on zero moments leaves only the decoupled decay: p * (1 - lr * wd).
  std::vector<float> ps = {2.0f, -3.0f}, ms(2, 0.0f), vs(2, 0.0f), gs(2, 0.0f);
  std::vector<std::uint16_t> ws(2);
  params = AdamParams{};
  params.lr = 0.5f;
  params.weight_decay = 0.5f;
  params.step = 7;
  adam_reference(ps.data(), ms.data(), vs.data(), gs.data(), ws.data(), 2, params);
  CHECK(ps[0] == 1.5f);
  CHECK(ps[1] == -2.25f);
  CHECK(ws[1] == float_to_bf16(-2.25f));
  CHECK(ms[0] == 0.0f);
}

namespace {

// Non-zero BF16 values in [-4, 4): a kept element is then never 0, so out tells kept from dropped.
std::vector<std::uint16_t> nonzero_bf16(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = float_to_bf16(4.0f * random_uniform(seed, i));
    if (bf16_to_float(v[i]) == 0.0f) v[i] = float_to_bf16(1.0f);
  }
  return v;
}

// Whether bf16 `got` is a nearest BF16 value to `exact`: neither neighbouring code (the bit pattern
// +-1, same sign, for a finite non-zero value) is closer.
bool nearest_bf16(std::uint16_t got, double exact) {
  const double d = std::fabs(static_cast<double>(bf16_to_float(got)) - exact);
  const auto down = static_cast<std::uint16_t>(got - 1), up = static_cast<std::uint16_t>(got + 1);
  return d <= std::fabs(static_cast<double>(bf16_to_float(down)) - exact) &&
         d <= std::fabs(static_cast<double>(bf16_to_float(up)) - exact);
}

}  // namespace

TEST_CASE("dropout: the kept fraction is 1 - p; kept values are scaled by 1/(1-p) in BF16 rounding, dropped are +0") {
  const std::size_t n = 1000000;
  const auto in = nonzero_bf16(n, 81);
  std::vector<std::uint8_t> mask(n);
  std::vector<std::uint16_t> out(n);
  for (const float p : {0.0f, 0.1f, 0.25f, 0.5f}) {
    CAPTURE(p);
    dropout_forward_reference(in.data(), static_cast<std::int64_t>(n), p, 82, mask.data(), out.data());
    std::size_t kept = 0, kept_pairs = 0, bad_mask = 0, bad_kept = 0, bad_dropped = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bad_mask += mask[i] > 1;
      kept += mask[i];
      if (i > 0) kept_pairs += mask[i] & mask[i - 1];
      if (mask[i] == 0) {
        bad_dropped += out[i] != 0;  // +0: the sign bit clear too
        continue;
      }
      const double x = bf16_to_float(in[i]);
      const double exact = x / (1.0 - static_cast<double>(p));
      bad_kept += !nearest_bf16(out[i], exact);
      if (p == 0.5f) bad_kept += out[i] != float_to_bf16(static_cast<float>(2 * x));  // exact: x * 2
    }
    CHECK(bad_mask == 0);
    CHECK(bad_kept == 0);
    CHECK(bad_dropped == 0);
    const double q = 1.0 - static_cast<double>(p);
    // 1e6 draws: a standard deviation of sqrt(p q / n) <= 5e-4, so 0.5 % of q is > 5 sigma for these p.
    CHECK(std::fabs(static_cast<double>(kept) / static_cast<double>(n) - q) <= 0.005 * q);
    // Neighbours are independent: both kept with probability q^2.
    CHECK(std::fabs(static_cast<double>(kept_pairs) / static_cast<double>(n - 1) - q * q) <= 0.01 * q * q);
  }
  // Another seed, another mask; the same seed, the same one.
  std::vector<std::uint8_t> mask2(n), mask3(n);
  std::vector<std::uint16_t> out2(n);
  dropout_forward_reference(in.data(), static_cast<std::int64_t>(n), 0.5f, 83, mask2.data(), out2.data());
  dropout_forward_reference(in.data(), static_cast<std::int64_t>(n), 0.5f, 82, mask3.data(), out2.data());
  CHECK(mask2 != mask);
  CHECK(mask3 == mask);
}

TEST_CASE("dropout: the backward applies the forward's mask to d_out; a window regenerates its own mask") {
  const std::int64_t n = 10007;
  const auto un = static_cast<std::size_t>(n);
  const auto in = nonzero_bf16(un, 84), dout = nonzero_bf16(un, 85);
  for (const float p : {0.0f, 0.1f, 0.3f}) {
    CAPTURE(p);
    std::vector<std::uint8_t> mask(un), mask_d(un);
    std::vector<std::uint16_t> out(un), din(un), want(un);
    dropout_forward_reference(in.data(), n, p, 86, mask.data(), out.data());
    dropout_backward_reference(dout.data(), mask.data(), n, p, din.data());
    // The forward of d_out with the same seed draws the same mask, so it is the backward.
    dropout_forward_reference(dout.data(), n, p, 86, mask_d.data(), want.data());
    CHECK(mask_d == mask);
    CHECK(din == want);
    // A hand mask: the backward follows the mask it is given, not the seed's.
    std::vector<std::uint8_t> alternate(un);
    for (std::size_t i = 0; i < un; ++i) alternate[i] = static_cast<std::uint8_t>(i % 2);
    dropout_backward_reference(dout.data(), alternate.data(), n, p, din.data());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < un; ++i) {
      const double exact = bf16_to_float(dout[i]) / (1.0 - static_cast<double>(p));
      bad += i % 2 == 0 ? din[i] != 0 : !nearest_bf16(din[i], exact);
    }
    CHECK(bad == 0);
    // Elements [first, first + 100) on their own equal the whole tensor's.
    const std::int64_t first = 4321;
    std::vector<std::uint8_t> wmask(100);
    std::vector<std::uint16_t> wout(100);
    dropout_forward_reference(in.data() + first, 100, p, 86, wmask.data(), wout.data(), first);
    CHECK(std::equal(wmask.begin(), wmask.end(), mask.begin() + first));
    CHECK(std::equal(wout.begin(), wout.end(), out.begin() + first));
  }
}
