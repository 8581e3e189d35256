// The tensor-parallel communication of Transformer Engine's linears (program/layer_cost.cpp,
// add_column_parallel_comm / add_row_parallel_comm): which collectives run, how many bytes they
// move in each precision, and which of them hide under a gradient GEMM.
#include <doctest/doctest.h>

#include <string_view>

#include "../preset_scenario.hpp"
#include "collective/cost_model.hpp"
#include "program/layer_cost.hpp"

using namespace moesim;

namespace {
Scenario tp_scenario(Precision precision, bool overlap, std::int64_t tp = 8) {
  Scenario s = test::preset_scenario("tp", "llama-3-70b", "hgx-h100", tp, {8192, 1, 8});
  s.parallel.tp = tp;
  s.parallel.etp = tp;
  s.parallel.dp = 1;
  s.parallel.sequence_parallel = true;
  s.parallel.tp_comm_overlap = overlap;
  s.precision = precision;
  validate_layout(s);
  return s;
}

}  // namespace

TEST_CASE("sequence-parallel all-gathers move the quantised tensor, reduce-scatters 16-bit") {
  const double tokens = 8192, h = 8192;
  for (const Precision p : {Precision::kBf16, Precision::kFp8, Precision::kFp8Blockwise}) {
    CAPTURE(to_string(p));
    const Scenario s = tp_scenario(p, false);
    const program::LayerCostModel model(s, schedule::step_shape(s));
    const auto ops = model.transformer_layer_ops(false, 8192);
    const auto& gather = test::find_op(ops.forward, "attn_all_gather");
    const auto& scatter = test::find_op(ops.forward, "attn_reduce_scatter");
    CHECK(gather.bytes == doctest::Approx(tokens * h * quantized_activation_bytes(p)));
    CHECK(scatter.bytes == doctest::Approx(tokens * h * 2.0));
    // Backward: the output gradient's all-gather (quantised) after the row-parallel linear; the
    // input's re-gather (quantised) plus the data gradient's reduce-scatter (16-bit) at the
    // column-parallel one.
    const auto& grad_gather = test::find_op(ops.backward, "attn_reduce_scatter");
    const auto& regather_and_scatter = test::find_op(ops.backward, "attn_all_gather");
    CHECK(grad_gather.bytes == doctest::Approx(tokens * h * quantized_activation_bytes(p)));
    CHECK(regather_and_scatter.bytes == doctest::Approx(tokens * h * (quantized_activation_bytes(p) + 2.0)));
  }
  CHECK(quantized_activation_bytes(Precision::kNvfp4) == doctest::Approx(0.5625));
}

TEST_CASE("without userbuffers only the column-parallel backward hides its collectives") {
  const Scenario s = tp_scenario(Precision::kBf16, false);
  const program::LayerCostModel model(s, schedule::step_shape(s));
  const auto ops = model.transformer_layer_ops(false, 8192);
  const auto& tp = model.groups().tp;
  const auto& comms = model.collectives();
  const double elems = 8192.0 * 8192.0;
  const double gather = comms.time(collective::Op::kAllGather, Bytes(elems * 2), tp).value();
  const double scatter = comms.time(collective::Op::kReduceScatter, Bytes(elems * 2), tp).value();
  // Forward: both blocking.
  CHECK(test::find_op(ops.forward, "attn_all_gather").seconds == doctest::Approx(gather));
  CHECK(test::find_op(ops.forward, "attn_reduce_scatter").seconds == doctest::Approx(scatter));
  // Backward: the output gradient's all-gather blocks; the re-gather and the reduce-scatter run
  // under the QKV data- and weight-gradient GEMMs, which at 8k tokens are longer than either.
  CHECK(test::find_op(ops.backward, "attn_reduce_scatter").seconds == doctest::Approx(gather));
  CHECK(test::find_op(ops.backward, "attn_all_gather").seconds < 0.25 * (gather + scatter));
  CHECK(test::find_op(ops.backward, "mlp_all_gather").seconds == doctest::Approx(0.0));
}

TEST_CASE("FP8 halves the exposed TP traffic of the all-gathers, not of the reduce-scatters") {
  // LayerCostModel keeps a reference to its scenario: the scenarios outlive the models.
  const Scenario s_bf16 = tp_scenario(Precision::kBf16, false);
  const Scenario s_fp8 = tp_scenario(Precision::kFp8, false);
  const program::LayerCostModel bf16(s_bf16, schedule::step_shape(s_bf16));
  const program::LayerCostModel fp8(s_fp8, schedule::step_shape(s_fp8));
  const auto b = bf16.transformer_layer_ops(false, 8192);
  const auto f = fp8.transformer_layer_ops(false, 8192);
  CHECK(test::find_op(f.forward, "mlp_all_gather").seconds < 0.75 * test::find_op(b.forward, "mlp_all_gather").seconds);
  const double scatter_fp8 = test::find_op(f.forward, "mlp_reduce_scatter").seconds;
  CHECK(scatter_fp8 == doctest::Approx(test::find_op(b.forward, "mlp_reduce_scatter").seconds));
}

TEST_CASE("userbuffers overlap hides the blocking collectives under their own GEMMs") {
  const Scenario s_plain = tp_scenario(Precision::kBf16, false);
  const Scenario s_ub = tp_scenario(Precision::kBf16, true);
  const program::LayerCostModel plain(s_plain, schedule::step_shape(s_plain));
  const program::LayerCostModel ub(s_ub, schedule::step_shape(s_ub));
  const auto p = plain.transformer_layer_ops(false, 8192).cost();
  const auto u = ub.transformer_layer_ops(false, 8192).cost();
  CHECK(u.forward.tp_comm < p.forward.tp_comm);
  CHECK(u.backward.tp_comm < p.backward.tp_comm);
  CHECK(u.forward.compute == doctest::Approx(p.forward.compute));
}
