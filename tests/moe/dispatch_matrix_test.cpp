// moe/dispatch_matrix: the per-rank-pair bytes of each dispatcher agree with dispatch_traffic's
// rows per token, put network rows on the rail peer only, and follow the destination's load.
#include <doctest/doctest.h>

#include <vector>

#include "moe/dispatch_matrix.hpp"

using namespace moesim;

namespace {
struct Sums {
  double nvlink = 0, network = 0, local = 0;
};
// Off-diagonal bytes a rank sends inside its domain and across domains.
Sums row_sums(const moe::DispatchMatrix& m, std::int64_t s, std::int64_t per_domain) {
  Sums out;
  for (std::int64_t d = 0; d < m.ranks; ++d) {
    const double b = m.dispatch(s, d);
    if (d == s) {
      out.local += b;
    } else if (d / per_domain == s / per_domain) {
      out.nvlink += b;
    } else {
      out.network += b;
    }
  }
  return out;
}
}  // namespace

TEST_CASE("balanced matrices sum to dispatch_rows for every dispatcher") {
  const double tokens = 4096;
  const std::int64_t hidden = 7168;
  for (const Dispatcher d : {Dispatcher::kAlltoall, Dispatcher::kDeepep, Dispatcher::kHybridep}) {
    for (const std::int64_t limit : {0, 4}) {
      const moe::DispatchShape shape{256, 8, 64, 8, limit, d};
      CAPTURE(to_string(d));
      CAPTURE(limit);
      const moe::DispatchRows rows = moe::dispatch_rows(shape);
      const moe::DispatchMatrix m = moe::dispatch_matrix(shape, tokens, hidden, 2.0);
      for (const std::int64_t s : {0, 13, 63}) {
        const Sums sums = row_sums(m, s, 8);
        CHECK(sums.nvlink == doctest::Approx(rows.nvlink * tokens * hidden * 2.0));
        CHECK(sums.network == doctest::Approx(rows.network * tokens * hidden * 2.0));
      }
      // The combine returns every row: its matrix is the dispatch's transposed (both 16-bit here).
      for (std::int64_t s = 0; s < 64; s += 9) {
        for (std::int64_t t = 0; t < 64; t += 7) CHECK(m.combine(t, s) == doctest::Approx(m.dispatch(s, t)));
      }
    }
  }
}

TEST_CASE("DeepEP sends across domains to the rail peer only; alltoall to every remote rank") {
  const moe::DispatchShape deepep{64, 4, 16, 8, 0, Dispatcher::kDeepep};
  const moe::DispatchMatrix m = moe::dispatch_matrix(deepep, 1024, 1024, 1.0 + 4.0 / 128.0);
  // Rank 3 (domain 0) reaches domain 1 only through rank 11, its rail peer.
  for (std::int64_t d = 8; d < 16; ++d) CHECK((m.dispatch(3, d) > 0) == (d == 11));
  moe::DispatchShape a2a = deepep;
  a2a.dispatcher = Dispatcher::kAlltoall;
  const moe::DispatchMatrix all = moe::dispatch_matrix(a2a, 1024, 1024, 2.0);
  for (std::int64_t d = 0; d < 16; ++d) CHECK(all.dispatch(3, d) == doctest::Approx(1024.0 * 4 / 16 * 1024 * 2));
  // The FP8 dispatch moves fewer bytes than its 16-bit combine.
  CHECK(m.dispatch(3, 11) < m.combine(11, 3));
}

TEST_CASE("a hot rank receives its load share, an all-gather everyone's tokens") {
  const moe::DispatchShape shape{16, 2, 4, 4, 0, Dispatcher::kAlltoall};
  const std::vector<double> share = {0.4, 0.2, 0.2, 0.2};
  const moe::DispatchMatrix m = moe::dispatch_matrix(shape, 100, 10, 2.0, share);
  for (std::int64_t s = 0; s < 4; ++s) {
    CHECK(m.dispatch(s, 0) == doctest::Approx(100.0 * 2 * 0.4 * 10 * 2));
    CHECK(m.dispatch(s, 1) == doctest::Approx(100.0 * 2 * 0.2 * 10 * 2));
  }
  moe::DispatchShape gather = shape;
  gather.dispatcher = Dispatcher::kAllgather;
  const moe::DispatchMatrix g = moe::dispatch_matrix(gather, 100, 10, 2.0);
  CHECK(g.dispatch(2, 1) == doctest::Approx(100.0 * 10 * 2));
}
