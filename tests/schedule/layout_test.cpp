#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "collective/closed_form.hpp"
#include "core/error.hpp"
#include "schedule/layout.hpp"

using namespace moesim;
using schedule::GroupKind;
using schedule::Layout;
using Groups = std::vector<std::vector<std::int64_t>>;

namespace {

ParallelSpec spec(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t ep, std::int64_t etp) {
  ParallelSpec p;
  p.tp = tp;
  p.cp = cp;
  p.pp = pp;
  p.ep = ep;
  p.etp = etp;
  return p;
}

// An HGX-like system: 8 GPUs per node and per NVLink domain (or NVL72: 4 per tray, 72 per domain).
hw::SystemSpec system_of(std::int64_t gpus, std::int64_t per_node = 8, std::int64_t domain = 8) {
  hw::SystemSpec s;
  s.gpus = gpus;
  s.gpus_per_node = per_node;
  s.nvlink_domain_size = domain;
  return s;
}

// Every group of `k` has size(k) ascending members, and each rank sits in exactly one of them,
// the one group_of returns.
void check_partition(const Layout& l, GroupKind k) {
  CAPTURE(schedule::to_string(k));
  const Groups all = l.groups(k);
  REQUIRE(static_cast<std::int64_t>(all.size()) == l.num_groups(k));
  std::vector<int> seen(static_cast<std::size_t>(l.world()), 0);
  for (const auto& g : all) {
    REQUIRE(static_cast<std::int64_t>(g.size()) == l.size(k));
    CHECK(std::is_sorted(g.begin(), g.end()));
    for (const std::int64_t r : g) {
      ++seen[static_cast<std::size_t>(r)];
      CHECK(l.group_of(k, r) == g);
    }
  }
  for (const int n : seen) CHECK(n == 1);
}

}  // namespace

TEST_CASE("hand-worked: 16 GPUs, tp 2, pp 2, ep 4, etp 1, cp 1 → dp 4, edp 2") {
  // Dense grid rank = tp + 2·(dp + 4·pp); expert grid rank = etp + 1·(ep + 4·(edp + 2·pp)).
  //   tp : [0,1] [2,3] [4,5] [6,7] [8,9] [10,11] [12,13] [14,15]
  //   dp : stride 2 inside each pp half: [0,2,4,6] [1,3,5,7] [8,10,12,14] [9,11,13,15]
  //   pp : stride tp·cp·dp = 8: [0,8] [1,9] [2,10] [3,11] [4,12] [5,13] [6,14] [7,15]
  //   ep : stride etp = 1: [0..3] [4..7] [8..11] [12..15]
  //   edp: stride etp·ep = 4 inside each pp half: [0,4] [1,5] [2,6] [3,7] [8,12] [9,13] [10,14] [11,15]
  //   etp: every rank alone.
  const Layout l(spec(2, 1, 2, 4, 1), 16, 8, 8);
  CHECK(l.size(GroupKind::kDp) == 4);
  CHECK(l.size(GroupKind::kEdp) == 2);
  CHECK(l.groups(GroupKind::kTp) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(l.groups(GroupKind::kDp) == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}});
  CHECK(l.groups(GroupKind::kPp) == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  CHECK(l.groups(GroupKind::kEp) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(l.groups(GroupKind::kEdp) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
  CHECK(l.groups(GroupKind::kEtp).size() == 16);
  CHECK(l.group_of(GroupKind::kEtp, 7) == std::vector<std::int64_t>{7});

  // Rank 13 = 1 + 2·(2 + 4·1) = 1 + 1·(1 + 4·(1 + 2·1)).
  const auto c = l.coordinates(13);
  CHECK(c == schedule::RankCoordinates{.tp = 1, .cp = 0, .dp = 2, .pp = 1, .etp = 0, .ep = 1, .edp = 1});
  CHECK(l.describe(13) == "rank 13: tp 1 cp 0 dp 2 pp 1 | etp 0 ep 1 edp 1");
  CHECK(l.rank_of(schedule::DenseCoordinates{.tp = 1, .cp = 0, .dp = 2, .pp = 1}) == 13);
  CHECK(l.rank_of(schedule::ExpertCoordinates{.etp = 0, .ep = 1, .edp = 1, .pp = 1}) == 13);
  CHECK(l.node_of(13) == 1);
  CHECK(l.nvlink_domain_of(13) == 1);
}

TEST_CASE("Megatron's docstring: 16 GPUs, tp 2, pp 4 → 8 dp, 8 tp and 4 pp groups") {
  // megatron/core/parallel_state.py, initialize_model_parallel docstring.
  const Layout l(spec(2, 1, 4, 1, 2), 16, 8, 8);
  CHECK(l.groups(GroupKind::kDp) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(l.groups(GroupKind::kTp) == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(l.groups(GroupKind::kPp) == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
}

TEST_CASE("Megatron's docstrings: context parallel groups and generate_masked_orthogonal_rank_groups") {
  // initialize_model_parallel, context_parallel_size: 8 GPUs, tp 4, cp 2 → [0,4] [1,5] [2,6] [3,7].
  const Layout cp(spec(4, 2, 1, 1, 4), 8, 8, 8);
  CHECK(cp.groups(GroupKind::kCp) == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(cp.groups(GroupKind::kTpCp) == Groups{{0, 1, 2, 3, 4, 5, 6, 7}});
  // generate_masked_orthogonal_rank_groups: [tp, dp, pp] = [2, 3, 4], dp groups
  // dp_group[0] = [0, 2, 4], dp_group[1] = [1, 3, 5], …, dp_group[7] = [19, 21, 23].
  const Layout m(spec(2, 1, 4, 1, 2), 24, 8, 8);
  const Groups dp = m.groups(GroupKind::kDp);
  REQUIRE(dp.size() == 8);
  CHECK(dp[0] == std::vector<std::int64_t>{0, 2, 4});
  CHECK(dp[1] == std::vector<std::int64_t>{1, 3, 5});
  CHECK(dp[7] == std::vector<std::int64_t>{19, 21, 23});
}

TEST_CASE("dp-cp: the group dense gradients reduce over spans cp and dp") {
  // tp 2, cp 2, pp 1 on 16 GPUs → dp 4; dp-cp of rank 0 = every rank with tp 0.
  const Layout l(spec(2, 2, 1, 1, 2), 16, 8, 8);
  CHECK(l.group_of(GroupKind::kDpCp, 0) == std::vector<std::int64_t>{0, 2, 4, 6, 8, 10, 12, 14});
  CHECK(l.group_of(GroupKind::kDp, 0) == std::vector<std::int64_t>{0, 4, 8, 12});
}

TEST_CASE("virtual stages follow Megatron's interleaving: chunk c of pp rank r is stage c·pp + r") {
  ParallelSpec p = spec(1, 1, 4, 1, 1);
  p.vpp = 2;
  const Layout l(p, 4, 8, 8);
  CHECK(l.vpp() == 2);
  CHECK(l.virtual_stage(0, 0) == 0);
  CHECK(l.virtual_stage(0, 1) == 4);
  CHECK(l.virtual_stage(3, 1) == 7);
}

TEST_CASE("properties over many layouts: partitions, round trips, shared pp groups") {
  int layouts = 0;
  for (const std::int64_t world : {8, 16, 64, 128}) {
    for (const std::int64_t tp : {1, 2, 4, 8}) {
      for (const std::int64_t cp : {1, 2, 4}) {
        for (const std::int64_t pp : {1, 2, 4}) {
          for (const std::int64_t ep : {1, 2, 4, 8, 16}) {
            for (const std::int64_t etp : {1, 2, 4}) {
              if (world % (tp * cp * pp) != 0 || world % (etp * ep * pp) != 0) continue;
              const Layout l(spec(tp, cp, pp, ep, etp), world, 8, 8);
              CAPTURE(l.describe(0));
              CAPTURE(world);
              ++layouts;
              for (const GroupKind k : schedule::kAllGroupKinds) check_partition(l, k);
              CHECK(l.size(GroupKind::kDp) * tp * cp * pp == world);
              CHECK(l.size(GroupKind::kEdp) * etp * ep * pp == world);
              for (std::int64_t r = 0; r < world; ++r) {
                const auto c = l.coordinates(r);
                CHECK(l.rank_of(c.dense()) == r);
                CHECK(l.rank_of(c.expert()) == r);
                // Both grids give the same pipeline stage: pp groups coincide (Megatron asserts it).
                CHECK(r / (world / pp) == c.pp);
              }
            }
          }
        }
      }
    }
  }
  CHECK(layouts > 100);
}

TEST_CASE("a tp group of 8 (stride 1) sits in one HGX node") {
  const Layout l(spec(8, 1, 2, 8, 1), 64, 8, 8);
  for (std::int64_t r = 0; r < l.world(); ++r) {
    const auto g = l.group_of(GroupKind::kTp, r);
    for (const std::int64_t m : g) CHECK(l.node_of(m) == l.node_of(r));
    const auto placement = l.placement(GroupKind::kTp, r);
    CHECK(placement.size == 8);
    CHECK(placement.per_domain == 8);
    CHECK_FALSE(placement.crosses_domains());
  }
}

TEST_CASE("placements from members match place_group's stride formula where it holds (HGX, powers of two)") {
  // With 8-GPU domains and power-of-two sizes every stride divides the domain or is a multiple of it,
  // so min(size, domain / stride) members share a domain, the formula of collective::place_group.
  for (const std::int64_t world : {64, 256}) {
    for (const std::int64_t tp : {1, 2, 4, 8}) {
      for (const std::int64_t cp : {1, 2}) {
        for (const std::int64_t ep : {1, 4, 8, 32}) {
          for (const std::int64_t etp : {1, 2}) {
            const std::int64_t pp = 2;
            if (world % (tp * cp * pp) != 0 || world % (etp * ep * pp) != 0) continue;
            const auto sys = system_of(world);
            const Layout l(spec(tp, cp, pp, ep, etp), sys);
            CAPTURE(l.describe(world - 1));
            const std::int64_t dp = l.size(GroupKind::kDp), edp = l.size(GroupKind::kEdp);
            for (const std::int64_t r : {std::int64_t{0}, world / 2 + 1, world - 1}) {
              CHECK(l.placement(GroupKind::kDp, r).per_domain == collective::place_group(sys, dp, tp * cp).per_domain);
              CHECK(l.placement(GroupKind::kCp, r).per_domain == collective::place_group(sys, cp, tp).per_domain);
              CHECK(l.placement(GroupKind::kEp, r).per_domain == collective::place_group(sys, ep, etp).per_domain);
              CHECK(l.placement(GroupKind::kEdp, r).per_domain ==
                    collective::place_group(sys, edp, etp * ep).per_domain);
              CHECK(l.placement(GroupKind::kPp, r).per_domain ==
                    collective::place_group(sys, pp, tp * cp * dp).per_domain);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("NVL72: a stride that does not divide the domain puts more members in some domains") {
  // tp 16 on 144 GPUs of two 72-GPU domains → dp 9 with stride 16: ranks 0, 16, 32, 48, 64 share
  // domain 0 (5 members), 80 … 128 domain 1 (4). The stride formula says 72 / 16 = 4.
  const auto sys = system_of(144, 4, 72);
  const Layout l(spec(16, 1, 1, 1, 1), sys);
  CHECK(l.group_of(GroupKind::kDp, 0) == std::vector<std::int64_t>{0, 16, 32, 48, 64, 80, 96, 112, 128});
  CHECK(l.placement(GroupKind::kDp, 0).per_domain == 5);
  CHECK(collective::place_group(sys, 9, 16).per_domain == 4);
  // A tp group of 16 straddles the domain boundary at 72: ranks 64…79 → 8 and 8.
  CHECK(l.placement(GroupKind::kTp, 64).per_domain == 8);
  CHECK(l.placement(GroupKind::kTp, 0).per_domain == 16);
  CHECK(l.node_of(71) == 17);
}

TEST_CASE("place_members counts the busiest domain") {
  const std::vector<std::int64_t> members = {0, 1, 2, 9, 17, 18};
  const auto g = schedule::place_members(members, 8);
  CHECK(g.size == 6);
  CHECK(g.per_domain == 3);
  CHECK(schedule::place_members(std::vector<std::int64_t>{5}, 8).per_domain == 1);
}

TEST_CASE("16,384 GPUs: builds and answers without materialising groups") {
  const auto start = std::chrono::steady_clock::now();
  const Layout l(spec(8, 2, 16, 64, 1), system_of(16384));
  CHECK(l.size(GroupKind::kDp) == 64);
  CHECK(l.size(GroupKind::kEdp) == 16);
  CHECK(l.describe(16383) == "rank 16383: tp 7 cp 1 dp 63 pp 15 | etp 0 ep 63 edp 15");
  CHECK(l.placement(GroupKind::kDp, 12345).size == 64);
  CHECK(l.placement(GroupKind::kEp, 0).per_domain == 8);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CHECK(ms < 50.0);  // generous: microseconds in practice
}

TEST_CASE("sizes that do not divide the world and out-of-range ranks are caller bugs") {
  CHECK_THROWS_AS(Layout(spec(3, 1, 1, 1, 1), 16, 8, 8), InternalError);
  CHECK_THROWS_AS(Layout(spec(1, 1, 1, 32, 1), 16, 8, 8), InternalError);
  const Layout l(spec(2, 1, 1, 1, 1), 16, 8, 8);
  CHECK_THROWS_AS((void)l.coordinates(16), InternalError);
  CHECK_THROWS_AS((void)l.group_of(GroupKind::kTp, -1), InternalError);
  CHECK_THROWS_AS((void)l.rank_of(schedule::DenseCoordinates{.tp = 2}), InternalError);
}
