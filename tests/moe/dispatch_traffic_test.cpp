// Dispatch rows per routed token (moe/dispatch_traffic): the closed forms against a Monte Carlo of
// the routing they describe, and Megatron's alltoall against the plain all-to-all it replaces.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

#include "collective/closed_form.hpp"
#include "config/hw_loader.hpp"
#include "core/rng.hpp"
#include "moe/dispatch_traffic.hpp"

using namespace moesim;

namespace {

// k distinct experts drawn uniformly from `pool` (a list of expert ids).
std::vector<std::int64_t> draw(RngStream& rng, std::vector<std::int64_t> pool, std::int64_t k) {
  for (std::int64_t i = 0; i < k; ++i) {
    const auto j = static_cast<std::size_t>(i) + static_cast<std::size_t>(rng.below(pool.size() - static_cast<std::size_t>(i)));
    std::swap(pool[static_cast<std::size_t>(i)], pool[j]);
  }
  pool.resize(static_cast<std::size_t>(k));
  return pool;
}

// The rows rank 0 sends, averaged over tokens, counted the way each dispatcher sends them.
moe::DispatchRows monte_carlo(const moe::DispatchShape& s, int tokens) {
  RngStream rng(7, "dispatch-test");
  const std::int64_t per_rank = s.experts / s.ep, per_domain = s.ep_per_domain;
  const std::int64_t domains = s.ep / per_domain;
  const bool dedup = s.dispatcher == Dispatcher::kDeepep || s.dispatcher == Dispatcher::kHybridep;
  double nvlink = 0, network = 0;
  for (int t = 0; t < tokens; ++t) {
    std::vector<std::int64_t> pool;
    if (s.device_limited > 0 && s.device_limited < domains) {
      std::vector<std::int64_t> doms(static_cast<std::size_t>(domains));
      std::iota(doms.begin(), doms.end(), 0);
      for (auto d : draw(rng, doms, s.device_limited)) {
        for (std::int64_t e = 0; e < per_rank * per_domain; ++e) pool.push_back(d * per_rank * per_domain + e);
      }
    } else {
      pool.resize(static_cast<std::size_t>(s.experts));
      std::iota(pool.begin(), pool.end(), 0);
    }
    const auto experts = draw(rng, pool, s.topk);
    std::set<std::int64_t> ranks, remote_domains;
    for (auto e : experts) {
      const std::int64_t r = e / per_rank;
      if (!dedup) {
        if (r == 0) continue;
        (r / per_domain == 0 ? nvlink : network) += 1;
        continue;
      }
      ranks.insert(r);
      if (r / per_domain != 0) remote_domains.insert(r / per_domain);
    }
    if (!dedup) continue;
    network += static_cast<double>(remote_domains.size());
    // Direct rows to peers of domain 0, and the rows the landing GPU of each remote domain forwards
    // (by symmetry what rank 0 forwards for others): every hit rank of that domain but the landing one.
    for (auto r : ranks) {
      if (r == 0) continue;
      if (r / per_domain == 0) {
        nvlink += 1;
      } else if (r % per_domain != 0) {
        nvlink += 1;  // forwarded from the landing GPU (same local index as rank 0) inside that domain
      }
    }
  }
  return {nvlink / tokens, network / tokens};
}

}  // namespace

TEST_CASE("miss probability: C(n−a, k)/C(n, k)") {
  CHECK(moe::miss_probability(10, 3, 2) == doctest::Approx(21.0 / 45.0).scale(0));
  CHECK(moe::miss_probability(8, 7, 2) == 0.0);
  CHECK(moe::miss_probability(8, 0, 2) == 1.0);
}

TEST_CASE("closed forms agree with a Monte Carlo of the routing, every dispatcher, with and without a node limit") {
  struct Case {
    moe::DispatchShape shape;
  };
  const Case cases[] = {
      {{256, 8, 64, 8, 0, Dispatcher::kAlltoall}},  // DeepSeek-V3, EP64 over 8 HGX nodes
      {{256, 8, 64, 8, 0, Dispatcher::kDeepep}},
      {{256, 8, 64, 8, 4, Dispatcher::kDeepep}},    // device-limited routing, M = 4
      {{256, 8, 64, 8, 4, Dispatcher::kAlltoall}},
      {{128, 8, 16, 8, 0, Dispatcher::kHybridep}},  // Qwen3-30B-A3B, EP16 over 2 nodes
      {{8, 2, 8, 8, 0, Dispatcher::kDeepep}},       // Mixtral inside one node
  };
  for (const auto& c : cases) {
    const auto exact = moe::dispatch_rows(c.shape);
    const auto mc = monte_carlo(c.shape, 40000);
    CAPTURE(static_cast<int>(c.shape.dispatcher));
    CAPTURE(c.shape.device_limited);
    // Relative 2 % (Monte Carlo noise at 40,000 tokens is well below it); exact zeros stay zero.
    CHECK(std::abs(exact.network - mc.network) <= 0.02 * std::max(mc.network, 1e-12));
    CHECK(std::abs(exact.nvlink - mc.nvlink) <= 0.02 * std::max(mc.nvlink, 1e-12));
  }
}

TEST_CASE("DeepEP sends fewer network rows than Megatron's alltoall, and the node limit caps them") {
  const auto a2a = moe::dispatch_rows({256, 8, 64, 8, 0, Dispatcher::kAlltoall});
  const auto deepep = moe::dispatch_rows({256, 8, 64, 8, 0, Dispatcher::kDeepep});
  const auto limited = moe::dispatch_rows({256, 8, 64, 8, 4, Dispatcher::kDeepep});
  CHECK(a2a.network == doctest::Approx(7.0).scale(0));  // 8 copies, 7 of 8 off-node
  CHECK(deepep.network < 0.7 * a2a.network);
  CHECK(limited.network < deepep.network);
  CHECK(limited.network <= 4.0);
}

TEST_CASE("alltoall rows give the same time as the plain all-to-all of all copies") {
  const auto system = config::load_system_preset("hgx-h100", 64);
  collective::GroupPlacement g;
  g.size = 64;
  g.per_domain = 8;
  const double row_bytes = 4096.0 * 7168.0 * 2.0;  // tokens · h · bf16
  const auto rows = moe::dispatch_rows({256, 8, 64, 8, 0, Dispatcher::kAlltoall});
  const double split = collective::alltoall_split_time(system, Bytes(row_bytes * rows.nvlink), Bytes(row_bytes * rows.network), g).value();
  const double plain = collective::collective_time(system, collective::Op::kAllToAll, Bytes(row_bytes * 8.0), g).value();
  CHECK(split == doctest::Approx(plain).epsilon(1e-12).scale(0));
}

TEST_CASE("dispatch element bytes: FP8 only where a deduplicating dispatcher quantises under low-precision training") {
  // moe.fp8_dispatch (DeepSeek-V3's stack): 1 byte + one fp32 scale per 128 elements.
  CHECK(moe::dispatch_element_bytes(Dispatcher::kDeepep, Precision::kFp8, true) == doctest::Approx(1.03125).scale(0));
  CHECK(moe::dispatch_element_bytes(Dispatcher::kHybridep, Precision::kMxfp8, true) == doctest::Approx(1.03125).scale(0));
  // Megatron-Core's flex dispatcher hands DeepEP / HybridEP the bf16 hidden states (the default).
  CHECK(moe::dispatch_element_bytes(Dispatcher::kDeepep, Precision::kFp8, false) == 2.0);
  CHECK(moe::dispatch_element_bytes(Dispatcher::kHybridep, Precision::kMxfp8, false) == 2.0);
  CHECK(moe::dispatch_element_bytes(Dispatcher::kDeepep, Precision::kBf16, true) == 2.0);
  CHECK(moe::dispatch_element_bytes(Dispatcher::kAlltoall, Precision::kFp8, true) == 2.0);
}
