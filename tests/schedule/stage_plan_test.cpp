#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "schedule/stage_plan.hpp"

using namespace moesim;

namespace {

/// The rule as first written (stable sort of the middle chunks by distance from the centre, then
/// chunk 0, then the last; extra layers handed out in that order). plan_stages computes the same
/// order in closed form so that it sorts nothing.
std::vector<std::int64_t> reference_chunk_layers(std::int64_t layers, std::int64_t chunks) {
  std::vector<std::int64_t> per_chunk(static_cast<std::size_t>(chunks), layers / chunks);
  std::int64_t extra = layers % chunks;
  std::vector<std::int64_t> order;
  for (std::int64_t c = 1; c + 1 < chunks; ++c) order.push_back(c);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return std::abs(2 * a - (chunks - 1)) < std::abs(2 * b - (chunks - 1));
  });
  order.push_back(0);
  if (chunks > 1) order.push_back(chunks - 1);
  for (std::size_t i = 0; extra > 0; i = (i + 1) % order.size(), --extra) ++per_chunk[static_cast<std::size_t>(order[i])];
  return per_chunk;
}

}  // namespace

TEST_CASE("uneven splits: extra layers go to the middle chunks first, then the ends (closed form = sorted order)") {
  for (std::int64_t pp : {1, 2, 3, 4, 5, 8, 16}) {
    for (std::int64_t vpp : {1, 2, 3, 4, 8}) {
      if (pp == 1 && vpp > 1) continue;
      const std::int64_t chunks = pp * vpp;
      for (std::int64_t layers = chunks; layers <= 3 * chunks + 1; ++layers) {
        CAPTURE(pp);
        CAPTURE(vpp);
        CAPTURE(layers);
        Scenario s;
        s.model.num_layers = layers;
        s.parallel.pp = pp;
        s.parallel.vpp = vpp;
        const auto stages = schedule::plan_stages(s);
        const auto want = reference_chunk_layers(layers, chunks);
        REQUIRE(stages.size() == static_cast<std::size_t>(pp));
        std::int64_t next = 0;
        for (std::int64_t c = 0; c < chunks; ++c) {
          const auto& st = stages[static_cast<std::size_t>(c % pp)];
          const auto& chunk = st.chunks[static_cast<std::size_t>(c / pp)];
          REQUIRE(static_cast<std::int64_t>(chunk.size()) == want[static_cast<std::size_t>(c)]);
          for (std::int64_t l : chunk) CHECK(l == next++);
        }
        CHECK(next == layers);
        for (const auto& st : stages) {
          std::size_t n = 0;
          for (const auto& ch : st.chunks) n += ch.size();
          CHECK(st.layers.size() == n);
          CHECK(std::is_sorted(st.layers.begin(), st.layers.end()));
        }
        CHECK(stages.front().has_embedding);
        CHECK(stages.back().has_output_head);
      }
    }
  }
}
