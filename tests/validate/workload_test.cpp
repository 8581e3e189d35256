// validate/workload: what the proxy runner runs — the proxy's shapes and the routed copies the
// simulation priced, rounded and split so that every source row is a real routing.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "config/builtin_scenarios.hpp"
#include "core/error.hpp"
#include "moe/expert_loads.hpp"
#include "sim/step_simulator.hpp"
#include "validate/proxy.hpp"
#include "validate/workload.hpp"

using namespace moesim;

namespace {

validate::ProxyPlan proxy(const std::string& scenario, std::int64_t gpus, std::optional<std::int64_t> layers = {},
                          std::optional<std::int64_t> experts = {}) {
  validate::ProxyOptions o;
  o.gpus = gpus;
  o.layers = layers;
  o.experts = experts;
  return validate::plan_proxy(config::load_scenario_argument(scenario), o);
}

/// Every promise of ValidationWorkload::routed_copies: shape, source rows of tokens × top-k, no entry
/// above tokens.
void check_rows(const ValidationWorkload& w) {
  REQUIRE(static_cast<std::int64_t>(w.routed_copies.size()) == w.layers);
  for (const auto& layer : w.routed_copies) {
    REQUIRE(static_cast<std::int64_t>(layer.size()) == w.microbatches);
    for (const auto& sources : layer) {
      REQUIRE(static_cast<std::int64_t>(sources.size()) == w.ep);
      for (const auto& row : sources) {
        REQUIRE(static_cast<std::int64_t>(row.size()) == w.experts);
        CHECK(std::accumulate(row.begin(), row.end(), std::int64_t{0}) == w.tokens_per_rank * w.topk);
        CHECK(*std::min_element(row.begin(), row.end()) >= 0);
        CHECK(*std::max_element(row.begin(), row.end()) <= w.tokens_per_rank);
      }
    }
  }
}

/// Copies of expert e over the sources of (layer, micro-batch).
std::int64_t expert_total(const ValidationWorkload& w, std::size_t layer, std::size_t mb, std::size_t e) {
  std::int64_t sum = 0;
  for (const auto& row : w.routed_copies[layer][mb]) sum += row[e];
  return sum;
}

}  // namespace

TEST_CASE("workload: Mixtral on one HGX node — the proxy's shapes, layout and balanced copies") {
  const validate::ProxyPlan plan = proxy("mixtral-8x7b-h100-64", 8, 2);
  const ValidationWorkload w = validate::make_workload(plan, 20, 5);
  CHECK(w.scenario == plan.scenario.name);
  CHECK(w.gpu == "h100-sxm");
  CHECK(w.precision == "bf16");
  CHECK(w.recompute == "none");
  CHECK(w.recompute_modules.empty());
  CHECK(w.attention == "flash");
  CHECK(w.gpus == 8);
  CHECK(w.tp == 1);
  CHECK(w.ep == 8);
  CHECK(w.dp == 8);
  CHECK(w.layers == 2);
  CHECK(w.microbatches == 2);
  CHECK(w.steps == 20);
  CHECK(w.warmup == 5);
  CHECK(w.micro_batch_size == 1);
  CHECK(w.seq == 4096);
  CHECK(w.tokens_per_rank == 4096);
  CHECK(w.hidden == 4096);
  CHECK(w.heads == 32);
  CHECK(w.kv_heads == 8);
  CHECK(w.head_dim == 128);
  CHECK(w.gated);
  CHECK(w.moe);
  CHECK(w.ffn == 0);
  CHECK(w.experts == 8);
  CHECK(w.topk == 2);
  CHECK(w.expert_ffn == 14336);
  CHECK(w.shared_ffn == 0);
  CHECK(w.router_scoring == "softmax");
  CHECK(w.seed == plan.scenario.seed);
  check_rows(w);
  // Balanced routing: every source sends tokens × top-k / experts copies to each expert.
  for (const auto& layer : w.routed_copies) {
    for (const auto& sources : layer) {
      for (const auto& row : sources) CHECK(std::all_of(row.begin(), row.end(), [](auto c) { return c == 1024; }));
    }
  }
}

TEST_CASE("workload: Mixtral on one GPU — EP 1, every copy from the one source") {
  const validate::ProxyPlan plan = proxy("mixtral-8x7b-h100-64", 1);
  const ValidationWorkload w = validate::make_workload(plan, 3, 0);
  CHECK(w.gpus == 1);
  CHECK(w.tp == 1);
  CHECK(w.ep == 1);
  CHECK(w.dp == 1);
  CHECK(w.layers == plan.scenario.model.num_layers);
  CHECK(w.microbatches == 2);
  CHECK(w.steps == 3);
  CHECK(w.warmup == 0);
  CHECK(w.tokens_per_rank == 4096);
  check_rows(w);
  CHECK(w.routed_copies[0][0][0] == std::vector<std::int64_t>(8, 1024));
}

TEST_CASE("workload: lognormal skew — rows add up, no entry above the tokens, totals are the simulation's draw") {
  const validate::ProxyPlan plan = proxy("custom-moe-lognormal-gb200", 4, 3);
  const Scenario& p = plan.scenario;
  const ValidationWorkload w = validate::make_workload(plan, 20, 5);
  CHECK(w.ep == 4);
  CHECK(w.experts == 64);
  CHECK(w.topk == 6);
  CHECK(w.shared_ffn == 3584);
  CHECK(w.precision == "mxfp8");
  CHECK(w.recompute == "selective");
  CHECK(w.recompute_modules == std::vector<std::string>{"moe_act"});
  CHECK(w.seed == 7);
  check_rows(w);
  // The simulation's load model built as StepSimulation builds it (one NVLink domain: the EP group's
  // experts all in it), drawn for the EP group's tokens at step 0.
  const moe::ExpertLoadModel loads(p.moe.routing, p.model.num_moe_experts, p.model.moe_router_topk, p.seed,
                                   p.model.num_moe_experts / p.parallel.ep * p.parallel.ep);
  const std::int64_t tokens = w.tokens_per_rank * w.ep;
  bool skewed = false;
  for (std::size_t l = 0; l < 3; ++l) {
    for (std::size_t mb = 0; mb < 2; ++mb) {
      const std::vector<double> drawn =
          loads.expert_tokens(tokens, static_cast<std::int64_t>(l), static_cast<std::int64_t>(mb));
      for (std::size_t e = 0; e < drawn.size(); ++e) {
        CAPTURE(l);
        CAPTURE(mb);
        CAPTURE(e);
        CHECK(std::abs(static_cast<double>(expert_total(w, l, mb, e)) - drawn[e]) < 1.0);
        CHECK(expert_total(w, l, mb, e) <= tokens);
      }
      const auto [lo, hi] = std::minmax_element(drawn.begin(), drawn.end());
      skewed = skewed || *hi > 2 * *lo;
    }
  }
  CHECK(skewed);
  // And what the simulation reports it priced: mean copies per expert over the micro-batches,
  // relative to the balanced share.
  const Result r = sim::simulate_step(p).result;
  REQUIRE(r.routing.present);
  REQUIRE(r.routing.layers.size() == 3);
  const double balanced = static_cast<double>(tokens * w.topk) / static_cast<double>(w.experts);
  for (const LayerExpertLoad& layer : r.routing.layers) {
    const auto l = static_cast<std::size_t>(layer.layer);
    for (std::size_t e = 0; e < layer.expert_load.size(); ++e) {
      const double mean = static_cast<double>(expert_total(w, l, 0, e) + expert_total(w, l, 1, e)) / 2.0;
      CHECK(mean / balanced == doctest::Approx(layer.expert_load[e]).epsilon(1.0 / balanced));
    }
  }
}

TEST_CASE("workload: largest-remainder rounding and the split among sources keep their bounds") {
  // Fractional shares: 10 copies over 4 experts of at most 5.
  CHECK(validate::round_copies({2.5, 2.5, 2.5, 2.5}, 10, 5) == std::vector<std::int64_t>{3, 3, 2, 2});
  CHECK(validate::round_copies({0.2, 4.4, 5.0, 0.4}, 10, 5) == std::vector<std::int64_t>{0, 5, 5, 0});
  // A draw that lost copies at the cap (the multinomial chain clips): still the total, none above cap.
  const std::vector<std::int64_t> refilled = validate::round_copies({4, 4, 0, 0}, 16, 4);
  CHECK(refilled == std::vector<std::int64_t>{4, 4, 4, 4});
  const std::vector<std::int64_t> short_draw = validate::round_copies({8, 3, 1, 0, 0}, 20, 8);
  CHECK(std::accumulate(short_draw.begin(), short_draw.end(), std::int64_t{0}) == 20);
  CHECK(*std::max_element(short_draw.begin(), short_draw.end()) <= 8);
  // The split: 2 sources of 3 tokens, top-2 (rows of 6, entries <= 3); experts hold up to 2 × 3.
  for (const std::vector<std::int64_t>& copies :
       {std::vector<std::int64_t>{6, 6, 0, 0}, std::vector<std::int64_t>{5, 1, 3, 3},
        std::vector<std::int64_t>{1, 1, 1, 1, 1, 1, 6, 0}, std::vector<std::int64_t>{3, 3, 3, 3}}) {
    const auto rows = validate::split_among_sources(copies, 2);
    REQUIRE(rows.size() == 2);
    for (const auto& row : rows) {
      CHECK(std::accumulate(row.begin(), row.end(), std::int64_t{0}) == 6);
      CHECK(*std::max_element(row.begin(), row.end()) <= 3);
    }
    for (std::size_t e = 0; e < copies.size(); ++e) CHECK(rows[0][e] + rows[1][e] == copies[e]);
  }
  // Exhaustively over small cases: every composition of S·R copies into E experts, each <= S·T.
  for (std::int64_t sources = 1; sources <= 4; ++sources) {
    const std::int64_t tokens = 3, topk = 2, experts = 4;
    const std::int64_t total = sources * tokens * topk, cap = sources * tokens;
    std::vector<std::int64_t> c(static_cast<std::size_t>(experts), 0);
    // Enumerate c0..c2 and let c3 take the rest.
    for (c[0] = 0; c[0] <= cap; ++c[0]) {
      for (c[1] = 0; c[1] <= cap; ++c[1]) {
        for (c[2] = 0; c[2] <= cap; ++c[2]) {
          c[3] = total - c[0] - c[1] - c[2];
          if (c[3] < 0 || c[3] > cap) continue;
          for (const auto& row : validate::split_among_sources(c, sources)) {
            REQUIRE(std::accumulate(row.begin(), row.end(), std::int64_t{0}) == tokens * topk);
            REQUIRE(*std::max_element(row.begin(), row.end()) <= tokens);
          }
        }
      }
    }
  }
}

TEST_CASE("workload: what the runner cannot run is refused with the scenario path") {
  validate::ProxyPlan plan = proxy("mixtral-8x7b-h100-64", 8, 2);
  CHECK_THROWS_WITH_AS((void)validate::make_workload(plan, 0, 5), doctest::Contains("--steps"), InputError);
  CHECK_THROWS_WITH_AS((void)validate::make_workload(plan, 10001, 5), doctest::Contains("1 to 10000"), InputError);
  CHECK_THROWS_WITH_AS((void)validate::make_workload(plan, 20, -1), doctest::Contains("--warmup"), InputError);
  CHECK_THROWS_WITH_AS((void)validate::make_workload(plan, 20, 1001), doctest::Contains("0 to 1000"), InputError);
  validate::ProxyPlan tp2 = plan;
  tp2.scenario.parallel.tp = 2;
  tp2.scenario.parallel.dp = 4;
  CHECK_THROWS_WITH_AS((void)validate::make_workload(tp2, 20, 5), doctest::Contains("/parallel/tp"), InputError);
  CHECK_THROWS_WITH_AS((void)validate::make_workload(tp2, 20, 5), doctest::Contains("TP 1 only"), InputError);
  validate::ProxyPlan dropping = plan;
  dropping.scenario.moe.capacity_factor = 1.25;
  CHECK_THROWS_WITH_AS((void)validate::make_workload(dropping, 20, 5), doctest::Contains("/moe/capacity_factor"),
                       InputError);
  validate::ProxyPlan fp16 = plan;
  fp16.scenario.precision = Precision::kFp16;
  CHECK_THROWS_WITH_AS((void)validate::make_workload(fp16, 20, 5), doctest::Contains("/precision"), InputError);
  // Multi-latent attention runs: every head gets its own key and value, head_dim is the q/k one.
  validate::ProxyPlan mla = plan;
  mla.scenario.model.multi_latent_attention = model::MlaSpec{1536, 512, 128, 64, 128};
  const ValidationWorkload m = validate::make_workload(mla, 20, 5);
  CHECK(m.kv_lora_rank == 512);
  CHECK(m.q_lora_rank == 1536);
  CHECK(m.qk_rope_head_dim == 64);
  CHECK(m.v_head_dim == 128);
  CHECK(m.head_dim == 128 + 64);
  CHECK(m.kv_heads == m.heads);
  validate::ProxyPlan window = plan;
  window.scenario.model.sliding_window = 1024;
  CHECK_THROWS_WITH_AS((void)validate::make_workload(window, 20, 5), doctest::Contains("/model/sliding_window"),
                       InputError);
}

TEST_CASE("proxy --experts: fewer experts of the same shape, top-k and routing; out of range refused") {
  const validate::ProxyPlan full = proxy("custom-moe-lognormal-gb200", 4, 2);
  const validate::ProxyPlan cut = proxy("custom-moe-lognormal-gb200", 4, 2, 32);
  CHECK(cut.scenario.model.num_moe_experts == 32);
  CHECK(cut.scenario.model.moe_router_topk == full.scenario.model.moe_router_topk);
  CHECK(cut.scenario.model.moe_ffn_hidden_size == full.scenario.model.moe_ffn_hidden_size);
  CHECK(cut.scenario.model.moe_shared_expert_intermediate_size ==
        full.scenario.model.moe_shared_expert_intermediate_size);
  CHECK(cut.scenario.moe.routing.distribution == RoutingDistribution::kLognormal);
  CHECK(cut.scenario.parallel.ep == full.scenario.parallel.ep);
  CHECK(std::any_of(cut.notes.begin(), cut.notes.end(),
                    [](const std::string& n) { return n.find("32 of the model's 64 routed experts") != n.npos; }));
  const ValidationWorkload w = validate::make_workload(cut, 20, 5);
  CHECK(w.experts == 32);
  check_rows(w);
  // The model's own count is no change and says nothing.
  const validate::ProxyPlan same = proxy("custom-moe-lognormal-gb200", 4, 2, 64);
  CHECK(same.notes.size() == full.notes.size());
  auto refused = [](std::int64_t experts, const char* needle) {
    CHECK_THROWS_WITH_AS((void)proxy("custom-moe-lognormal-gb200", 4, 2, experts), doctest::Contains(needle),
                         InputError);
  };
  refused(4, "at least top-k (6)");       // below top-k
  refused(30, "multiple of the proxy's EP (4)");
  refused(128, "at most the model's (64)");
  refused(0, "--experts");
  refused(-1, "multiples of 4 from 8 to 64");
}
