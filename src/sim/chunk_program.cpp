#include "sim/chunk_program.hpp"

#include <utility>

#include "program/ep_overlap.hpp"
#include "program/ragged_expert_cost.hpp"

namespace moesim::sim {
namespace {

struct Unit {
  const program::OpProgram* ops;
  schedule::RankParams params;
  std::int32_t layer = -1;
};

void append_ops(std::vector<program::LayerOp>& ops, std::vector<std::int32_t>& load_layer, std::vector<double>* hidden,
                const program::OpProgram& unit, const std::vector<program::LayerOp>& unit_ops, std::int32_t layer,
                Dispatcher dispatcher, double sm_share) {
  const program::EpPairSaving saving = hidden ? program::ep_pair_saving(unit, sm_share) : program::EpPairSaving{};
  for (const program::LayerOp& op : unit_ops) {
    ops.push_back(op);
    load_layer.push_back(layer >= 0 && program::follows_expert_load(op, dispatcher) ? layer : -1);
    if (hidden) hidden->push_back(program::ep_hidden_seconds(saving, op));
  }
}

/// Forward in unit order; backward in reverse unit order, marking where each unit's gradients end.
ChunkProgram assemble(const std::vector<Unit>& units, Dispatcher dispatcher, bool a2a_overlap, double sm_share) {
  ChunkProgram p;
  std::vector<double>* forward_hidden = a2a_overlap ? &p.forward_ep_hidden : nullptr;
  std::vector<double>* backward_hidden = a2a_overlap ? &p.backward_ep_hidden : nullptr;
  for (const Unit& u : units) {
    append_ops(p.forward, p.forward_load_layer, forward_hidden, *u.ops, u.ops->forward, u.layer, dispatcher, sm_share);
    p.params += u.params;
  }
  for (auto it = units.rbegin(); it != units.rend(); ++it) {
    append_ops(p.backward, p.backward_load_layer, backward_hidden, *it->ops, it->ops->backward, it->layer, dispatcher,
               sm_share);
    if (!p.backward.empty() && it->params.total() > 0) p.gradients_ready.push_back({p.backward.size() - 1, it->params});
  }
  p.backward_marks.assign(p.backward.size(), false);
  for (const GradientsReady& g : p.gradients_ready) p.backward_marks[g.after_op] = true;
  return p;
}

}  // namespace

std::vector<ChunkProgram> build_chunk_programs(const Scenario& s, const program::LayerCostModel& costs,
                                               const schedule::StageLayers& stage) {
  auto layer_ops = [&](std::int64_t layer) -> const program::OpProgram& { return costs.layer(layer).ops; };
  const program::OpProgram embedding = costs.embedding_ops();
  const program::OpProgram head = costs.output_head_ops();
  const program::OpProgram mtp_projection = costs.mtp_projection_ops();

  std::vector<ChunkProgram> out;
  const std::size_t chunks = stage.chunks.size();
  for (std::size_t c = 0; c < chunks; ++c) {
    std::vector<Unit> units;
    if (stage.has_embedding && c == 0) units.push_back({&embedding, schedule::embedding_rank_params(s)});
    for (std::int64_t layer : stage.chunks[c]) {
      units.push_back({&layer_ops(layer), schedule::layer_rank_params(s, layer), static_cast<std::int32_t>(layer)});
    }
    if (stage.has_output_head && c + 1 == chunks) {
      // MTP modules follow the main decoder (projection, then a transformer layer each), then the
      // LM head and loss run once per prediction depth; the head's weights are shared by all.
      for (std::int64_t k = 0; k < s.model.mtp_num_layers; ++k) {
        const schedule::RankParams layer = schedule::layer_rank_params(s, s.model.num_layers - 1);
        schedule::RankParams projection = schedule::mtp_module_rank_params(s);
        projection.dense -= layer.dense;
        projection.expert -= layer.expert;
        units.push_back({&mtp_projection, projection});
        units.push_back({&layer_ops(s.model.num_layers - 1), layer, static_cast<std::int32_t>(s.model.num_layers + k)});
      }
      for (std::int64_t k = 0; k <= s.model.mtp_num_layers; ++k) {
        units.push_back({&head, k == 0 ? schedule::output_head_rank_params(s) : schedule::RankParams{}});
      }
    }
    out.push_back(assemble(units, s.moe.dispatcher, s.moe.a2a_overlap, program::dispatcher_sm_share(s)));
  }
  return out;
}

}  // namespace moesim::sim
