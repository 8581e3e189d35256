#include "memory/memory_timeline.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "memory/stage_ops.hpp"
#include "schedule/pipeline_schedule.hpp"

namespace moesim::memory {
namespace detail {

StageContext stage_context(const Scenario& s, const schedule::StageLayers& stage, const RankMemory& static_terms,
                           const MemoryOptions& opt) {
  StageContext ctx;
  ctx.s = &s;
  ctx.stage = &stage;
  // The same per-kind figures rank_memory sums, so both agree wherever the same op sets the peak.
  ctx.unit[kSavedDense] = layer_activation(s, false, opt).total();
  ctx.unit[kSavedMoe] = s.model.is_moe() ? layer_activation(s, true, opt).total() : 0.0;
  ctx.unit[kSavedEmbedding] = embedding_activation_bytes(s);
  const bool last_moe = s.model.layer_is_moe(s.model.num_layers - 1);
  ctx.unit[kSavedMtp] = ctx.unit[last_moe ? kSavedMoe : kSavedDense] + mtp_input_bytes(s);
  ctx.dense = {TimelineOpKind::kLayer, -1, false, kSavedDense, layer_working_bytes(s, false, false, opt),
               layer_working_bytes(s, false, true, opt)};
  ctx.moe = {TimelineOpKind::kLayer, -1, true, kSavedMoe, layer_working_bytes(s, true, false, opt),
             layer_working_bytes(s, true, true, opt)};
  ctx.logits = logits_bytes(s);
  ctx.model_state = static_terms.model_state_bytes();
  ctx.comm = static_terms.comm_buffers_bytes;
  ctx.context = static_terms.cuda_context_bytes;
  ctx.fragmentation_share = opt.fragmentation_share;
  return ctx;
}

}  // namespace detail

MemoryTimeline memory_timeline(const Scenario& s, std::int64_t pipeline_stage, const schedule::StageLayers& stage,
                               const MemoryOptions& opt) {
  const RankMemory static_terms = rank_memory(s, pipeline_stage, stage, opt);  // also checks the stage index
  const detail::StageContext ctx = detail::stage_context(s, stage, static_terms, opt);
  const auto& p = s.parallel;
  std::vector<std::vector<detail::StageOp>> chunks(static_cast<std::size_t>(p.vpp));
  for (std::int64_t c = 0; c < p.vpp; ++c) {
    detail::for_each_op(ctx, c, [&](const detail::StageOp& op) { chunks[static_cast<std::size_t>(c)].push_back(op); });
  }
  const detail::Live none;
  MemoryTimeline t;
  t.stage = pipeline_stage;
  t.baseline_bytes = ctx.resident(none, 0.0);
  const auto order = schedule::pipeline_order(pipeline_stage, p.pp, p.vpp, s.num_microbatches());
  std::size_t ops = 0;
  for (const auto& pass : order) ops += chunks[static_cast<std::size_t>(pass.chunk)].size();
  t.points.reserve(ops);
  detail::Live live;
  double best = 0;
  auto record = [&](const detail::StageOp& op, std::int64_t index, const schedule::PipelinePass& pass, double running) {
    t.points.push_back({detail::timeline_op(op, index, pass), running, ctx.resident(live, 0.0)});
    if (t.points.size() == 1 || running > best) {  // the first op that reaches the peak names it
      best = running;
      t.peak_index = t.points.size() - 1;
    }
  };
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& pass = order[i];
    const auto& program = chunks[static_cast<std::size_t>(pass.chunk)];
    const auto index = static_cast<std::int64_t>(i);
    if (!pass.backward) {
      for (const auto& op : program) {
        // A forward builds the layer's saved activations while its buffers are live.
        live.add(op.saved, 1);
        record(op, index, pass, ctx.resident(live, op.forward_work));
      }
    } else {
      for (auto it = program.rbegin(); it != program.rend(); ++it) {
        // A backward still holds the layer's saved activations until it ends.
        const double running = ctx.resident(live, it->backward_work);
        live.add(it->saved, -1);
        record(*it, index, pass, running);
      }
    }
  }
  return t;
}

std::string describe_kind(const TimelineOp& op) {
  const char* kind = op.moe ? "MoE" : "dense";
  switch (op.kind) {
    case TimelineOpKind::kEmbedding:
      return "embedding";
    case TimelineOpKind::kLayer:
      return fmt::format("layer {} ({})", op.layer, kind);
    case TimelineOpKind::kMtp:
      return fmt::format("MTP module {} ({})", op.layer, kind);
    case TimelineOpKind::kOutputHead:
      return "output head and loss";
  }
  return "?";
}

std::string describe(const TimelineOp& op) {
  return fmt::format("{} of micro-batch {}, chunk {}, {}", op.backward ? "backward" : "forward", op.microbatch,
                     op.chunk, describe_kind(op));
}

}  // namespace moesim::memory
