// whatif.kernel_speedup on the op program (program/kernel_speedup.cpp): every op a class names exists
// in the programs moesim builds, a class's factor divides exactly its ops' times, and the ragged
// re-costing of the expert GEMMs keeps the factor.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "../preset_scenario.hpp"
#include "compute/kernel_cost.hpp"
#include "program/data_parallel.hpp"
#include "program/layer_cost.hpp"
#include "program/ragged_expert_cost.hpp"
#include "schedule/stage_params.hpp"

using namespace moesim;

namespace {

Scenario deepseek(std::int64_t q_lora_rank) {
  Scenario s = test::preset_scenario("dsv3", "deepseek-v3", "hgx-h100", 64, {4096, 1, 64});
  s.parallel.ep = 8;
  s.parallel.pp = 8;
  s.parallel.dp = 8;
  s.model.multi_latent_attention->q_lora_rank = q_lora_rank;
  validate_layout(s);
  return s;
}

Scenario llama() {
  Scenario s = test::preset_scenario("llama", "llama-3-8b", "hgx-h100", 8, {8192, 1, 8});
  s.parallel.tp = 2;
  s.parallel.etp = 2;
  s.parallel.dp = 4;
  validate_layout(s);
  return s;
}

void collect(const program::OpProgram& p, std::set<std::string>& names) {
  for (const auto* pass : {&p.forward, &p.backward}) {
    for (const auto& op : *pass) names.insert(op.name);
  }
}

// Sum of the seconds of the ops of `ops` whose class is `c`, and of all the others.
std::pair<double, double> split(const std::vector<program::LayerOp>& ops, OpClass c) {
  double in = 0, out = 0;
  for (const auto& op : ops) {
    const OpClassInfo* k = op_class_of(op.name);
    (k != nullptr && k->op_class == c ? in : out) += op.seconds;
  }
  return {in, out};
}

}  // namespace

TEST_CASE("every op a kernel-speedup class names is an op of the programs moesim builds") {
  std::set<std::string> names;
  for (const Scenario& s : {deepseek(1536), deepseek(0), llama()}) {
    const program::LayerCostModel model(s, schedule::step_shape(s));
    for (const std::int64_t layer : {std::int64_t{0}, s.model.num_layers - 1}) collect(model.layer(layer).ops, names);
    collect(model.output_head_ops(), names);
  }
  names.insert("optimizer_step");  // not a layer op: program::optimizer_step_seconds, the trace's name
  for (const OpClassInfo& c : kOpClasses) {
    for (std::string_view op : c.ops) {
      CAPTURE(c.name);
      CHECK_MESSAGE(names.contains(std::string(op)), "class ", c.name, " names ", op, ", which no program has");
    }
  }
  // No op belongs to two classes.
  std::set<std::string_view> seen;
  for (const OpClassInfo& c : kOpClasses) {
    for (std::string_view op : c.ops) CHECK(seen.insert(op).second);
  }
}

TEST_CASE("a class's factor divides its ops' times and leaves the others") {
  Scenario base = deepseek(1536);
  for (const OpClassInfo& c : kOpClasses) {
    if (c.op_class == OpClass::kOptimizer) continue;
    CAPTURE(c.name);
    Scenario fast = base;
    fast.whatif.kernel_speedup[static_cast<std::size_t>(c.op_class)] = 2.0;
    const program::LayerCostModel m0(base, schedule::step_shape(base)), m1(fast, schedule::step_shape(fast));
    for (const std::int64_t layer : {std::int64_t{0}, base.model.num_layers - 1}) {
      const auto& a = m0.layer(layer).ops;
      const auto& b = m1.layer(layer).ops;
      for (const auto& [pass0, pass1] : {std::pair{&a.forward, &b.forward}, std::pair{&a.backward, &b.backward}}) {
        const auto [in0, out0] = split(*pass0, c.op_class);
        const auto [in1, out1] = split(*pass1, c.op_class);
        CHECK(in1 == doctest::Approx(in0 / 2.0));
        CHECK(out1 == doctest::Approx(out0));
      }
    }
  }
  // {} and all-ones change nothing.
  Scenario ones = base;
  ones.whatif = {};
  CHECK_FALSE(ones.whatif.any());
}

TEST_CASE("the optimizer class speeds up the GPU's step kernel") {
  Scenario s = deepseek(1536);
  const compute::KernelCostModel kernels(s.system.gpu, nullptr);
  const auto params = schedule::layer_rank_params(s, s.model.num_layers - 1);
  const double t0 = program::optimizer_step_seconds(s, kernels, params);
  s.whatif.kernel_speedup[static_cast<std::size_t>(OpClass::kOptimizer)] = 4.0;
  CHECK(program::optimizer_step_seconds(s, kernels, params) == doctest::Approx(t0 / 4.0));
}

TEST_CASE("the ragged re-costing of a sped-up expert GEMM keeps the speed-up") {
  Scenario base = deepseek(1536);
  Scenario fast = base;
  fast.whatif.kernel_speedup[static_cast<std::size_t>(OpClass::kExpertMlp)] = 2.0;
  const program::LayerCostModel m0(base, schedule::step_shape(base)), m1(fast, schedule::step_shape(fast));
  const std::int64_t moe_layer = base.model.num_layers - 1;
  const auto& op0 = test::find_op(m0.layer(moe_layer).ops.forward, "expert_fc1");
  const auto& op1 = test::find_op(m1.layer(moe_layer).ops.forward, "expert_fc1");
  REQUIRE(op0.local_experts > 0);
  CHECK(op1.speedup == 2.0);
  // A rank whose experts hold 0.5×, 1×, 1.5×, ... of the balanced share.
  std::vector<double> factors;
  for (std::int64_t e = 0; e < op0.local_experts; ++e) factors.push_back(0.5 + static_cast<double>(e % 3) * 0.5);
  program::RaggedExpertCost c0(m0.kernels()), c1(m1.kernels());
  const double ragged0 = c0.seconds(op0, factors, 1.0);
  CHECK(ragged0 > 0);
  CHECK(c1.seconds(op1, factors, 1.0) == doctest::Approx(ragged0 / 2.0));
}
