#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "schedule/pipeline_schedule.hpp"

using namespace moesim;
using schedule::PipelinePass;

namespace {
PipelinePass F(int mb, int chunk = 0) { return {mb, chunk, false}; }
PipelinePass B(int mb, int chunk = 0) { return {mb, chunk, true}; }
}  // namespace

TEST_CASE("1F1B: warm-up of pp − rank − 1 forwards, then one forward one backward, then the cool-down") {
  // Megatron forward_backward_pipelining_without_interleaving, pp = 4, 6 micro-batches.
  const auto first = schedule::pipeline_order(0, 4, 1, 6);
  const std::vector<PipelinePass> expected_first = {F(0), F(1), F(2), F(3), B(0), F(4), B(1), F(5), B(2),
                                                    B(3), B(4), B(5)};
  CHECK(first == expected_first);
  const auto last = schedule::pipeline_order(3, 4, 1, 6);
  const std::vector<PipelinePass> expected_last = {F(0), B(0), F(1), B(1), F(2), B(2),
                                                   F(3), B(3), F(4), B(4), F(5), B(5)};
  CHECK(last == expected_last);
  // Fewer micro-batches than stages: all forwards, then all backwards.
  const auto few = schedule::pipeline_order(0, 4, 1, 2);
  const std::vector<PipelinePass> expected_few = {F(0), F(1), B(0), B(1)};
  CHECK(few == expected_few);
}

TEST_CASE("interleaved 1F1B: groups of pp micro-batches per chunk, Megatron's warm-up count") {
  // pp = 2, vpp = 2, 4 micro-batches. Schedule table (forward): (0,c0) (1,c0) (0,c1) (1,c1) (2,c0)
  // (3,c0) (2,c1) (3,c1); backward uses the same table with chunks reversed. Rank 0 warms up with
  // (pp − 0 − 1)·2 + (vpp − 1)·pp = 4 forwards.
  const auto r0 = schedule::pipeline_order(0, 2, 2, 4);
  const std::vector<PipelinePass> expected = {F(0, 0), F(1, 0), F(0, 1), F(1, 1), F(2, 0), B(0, 1), F(3, 0), B(1, 1),
                                              F(2, 1), B(0, 0), F(3, 1), B(1, 0), B(2, 1), B(3, 1), B(2, 0), B(3, 0)};
  CHECK(r0 == expected);
  // Rank 1 warms up with 2 forwards.
  const auto r1 = schedule::pipeline_order(1, 2, 2, 4);
  CHECK(r1[0] == F(0, 0));
  CHECK(r1[1] == F(1, 0));
  CHECK(r1[2] == F(0, 1));
  CHECK(r1[3] == B(0, 1));
}

TEST_CASE("every pass of every rank appears exactly once, backward after its forward") {
  for (std::int64_t pp : {1, 2, 4, 8}) {
    for (std::int64_t vpp : {1, 2, 3}) {
      if (pp == 1 && vpp > 1) continue;
      for (std::int64_t m : {1, 3, 8, 13}) {
        for (std::int64_t rank = 0; rank < pp; ++rank) {
          CAPTURE(pp);
          CAPTURE(vpp);
          CAPTURE(m);
          CAPTURE(rank);
          const auto order = schedule::pipeline_order(rank, pp, vpp, m);
          REQUIRE(order.size() == static_cast<std::size_t>(2 * m * vpp));
          std::set<std::tuple<int, int, bool>> seen;
          for (const auto& p : order) {
            CHECK(seen.insert({p.microbatch, p.chunk, p.backward}).second);
            if (p.backward) CHECK(seen.count({p.microbatch, p.chunk, false}) == 1);
          }
        }
      }
    }
  }
}

TEST_CASE("the source of a pass: previous stage forward, next stage backward, wrapping between chunks") {
  const auto f = schedule::pass_source(F(3, 1), 0, 4, 2);  // rank 0, chunk 1 ← rank 3, chunk 0
  CHECK(f.exists);
  CHECK(f.rank == 3);
  CHECK(f.pass == F(3, 0));
  CHECK_FALSE(schedule::pass_source(F(0, 0), 0, 4, 2).exists);
  const auto b = schedule::pass_source(B(2, 0), 3, 4, 2);  // last rank, chunk 0 ← rank 0, chunk 1
  CHECK(b.exists);
  CHECK(b.rank == 0);
  CHECK(b.pass == B(2, 1));
  CHECK_FALSE(schedule::pass_source(B(2, 1), 3, 4, 2).exists);  // the loss starts it
  const auto mid = schedule::pass_source(B(1, 0), 1, 4, 1);
  CHECK(mid.rank == 2);
}

#include "config/hw_loader.hpp"
#include "config/model_loader.hpp"
#include "schedule/stage_plan.hpp"

TEST_CASE("embedding and loss counted as pipeline layers: 126 layers over pp 16 · vpp 8 = 128 chunks") {
  // Megatron-Bridge's Llama-3.1-405B recipe: --account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split; the first chunk holds the embedding alone, the last the loss
  // alone, every other chunk one layer.
  Scenario s;
  s.model = config::load_model_preset("llama-3.1-405b");
  s.system = config::load_system_preset("gb200-nvl72", 1024);
  s.training = {8192, 1, 512};
  s.parallel.tp = 4;
  s.parallel.pp = 16;
  s.parallel.vpp = 8;
  s.parallel.dp = 1024 / 64;
  s.parallel.sequence_parallel = true;
  s.parallel.account_for_embedding_in_pipeline_split = true;
  s.parallel.account_for_loss_in_pipeline_split = true;
  REQUIRE(s.model.num_layers == 126);
  validate_layout(s);
  const auto stages = schedule::plan_stages(s);
  REQUIRE(stages.size() == 16);
  CHECK(stages[0].chunks[0].empty());           // the embedding's slot
  CHECK(stages[15].chunks[7].empty());          // the loss's slot
  CHECK(stages[1].chunks[0] == std::vector<std::int64_t>{0});
  CHECK(stages[0].chunks[1] == std::vector<std::int64_t>{15});
  std::size_t total = 0;
  for (const auto& st : stages) total += st.layers.size();
  CHECK(total == 126);
  CHECK(stages[0].layers.size() == 7);
  CHECK(stages[7].layers.size() == 8);
}

TEST_CASE("table_pass and warmup_passes rebuild pipeline_order without building it") {
  // The memory walks jump through the order with these two; they must agree with the order itself.
  for (std::int64_t pp : {1, 2, 3, 4, 8}) {
    for (std::int64_t vpp : {1, 2, 3, 4}) {
      if (pp == 1 && vpp > 1) continue;
      for (std::int64_t m : {1, 2, 3, 8, 13, 16}) {
        for (std::int64_t rank = 0; rank < pp; ++rank) {
          CAPTURE(pp);
          CAPTURE(vpp);
          CAPTURE(m);
          CAPTURE(rank);
          const auto order = schedule::pipeline_order(rank, pp, vpp, m);
          const std::int64_t total = m * vpp, w = schedule::warmup_passes(rank, pp, vpp, m);
          std::vector<PipelinePass> rebuilt;
          std::int64_t f = 0, b = 0;
          for (; f < w; ++f) rebuilt.push_back(schedule::table_pass(f, false, pp, vpp, m));
          for (; f < total; ++f, ++b) {
            rebuilt.push_back(schedule::table_pass(f, false, pp, vpp, m));
            rebuilt.push_back(schedule::table_pass(b, true, pp, vpp, m));
          }
          for (; b < total; ++b) rebuilt.push_back(schedule::table_pass(b, true, pp, vpp, m));
          CHECK(rebuilt == order);
          // The cursor steps through the same table.
          schedule::TableCursor fc(0, pp, vpp, m), bc(0, pp, vpp, m);
          for (std::int64_t i = 0; i < total; ++i, fc.next(), bc.next()) {
            CHECK(fc.pass(false) == schedule::table_pass(i, false, pp, vpp, m));
            CHECK(bc.pass(true) == schedule::table_pass(i, true, pp, vpp, m));
            CHECK(schedule::TableCursor(i, pp, vpp, m).pass(false) == fc.pass(false));
          }
        }
      }
    }
  }
}

namespace {
/// Runs every rank's pipeline_order as far as the inputs allow (a pass starts once the pass that
/// pass_source names has run on its rank; timing plays no part). True when every pass ran once.
bool orders_complete(std::int64_t pp, std::int64_t vpp, std::int64_t m) {
  std::vector<std::vector<PipelinePass>> orders;
  std::vector<std::set<std::tuple<int, int, bool>>> done(static_cast<std::size_t>(pp));
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  for (std::int64_t r = 0; r < pp; ++r) orders.push_back(schedule::pipeline_order(r, pp, vpp, m));
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t r = 0; r < orders.size(); ++r) {
      while (next[r] < orders[r].size()) {
        const PipelinePass& p = orders[r][next[r]];
        const auto src = schedule::pass_source(p, static_cast<std::int64_t>(r), pp, vpp);
        if (src.exists && done[static_cast<std::size_t>(src.rank)].count({src.pass.microbatch, src.pass.chunk,
                                                                          src.pass.backward}) == 0) {
          break;
        }
        CHECK(done[r].insert({p.microbatch, p.chunk, p.backward}).second);
        ++next[r];
        moved = true;
      }
    }
  }
  for (std::size_t r = 0; r < orders.size(); ++r) {
    if (next[r] != orders[r].size()) return false;
  }
  return true;
}
}  // namespace

TEST_CASE("issue 33: interleaved orders with a multiple of pp micro-batches run to the end; a short last group can "
          "deadlock") {
  // The layouts validate_layout accepts (vpp > 1 only with M a multiple of pp, Megatron-Core's rule).
  for (std::int64_t pp : {2, 3, 4, 8}) {
    for (std::int64_t vpp : {2, 3, 4}) {
      for (std::int64_t groups : {1, 2, 3}) {
        CAPTURE(pp);
        CAPTURE(vpp);
        CAPTURE(groups);
        CHECK(orders_complete(pp, vpp, groups * pp));
      }
    }
  }
  // Issue 33, pp 8, vpp 2, 12 micro-batches: groups of 8 and 4. Rank 0 warms up with
  // (8 − 1)·2 + 8 = 22 forwards, the last (9, c1); its input is rank 7's forward (9, c0), which rank 7
  // runs after its backward (0, c0); that needs rank 0's backward (0, c1), which comes after the
  // warm-up. Megatron-Core refuses the layout ("dependency bubbles"); the simulation stalled on it.
  CHECK_FALSE(orders_complete(8, 2, 12));
  CHECK(schedule::warmup_passes(0, 8, 2, 12) == 22);
  CHECK(schedule::pipeline_order(0, 8, 2, 12)[21] == F(9, 1));
  CHECK_FALSE(orders_complete(4, 3, 5));
}
