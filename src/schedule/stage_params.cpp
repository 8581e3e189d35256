#include "schedule/stage_params.hpp"

#include "model/counts.hpp"

namespace moesim::schedule {

RankParams layer_rank_params(const Scenario& s, std::int64_t layer) {
  return layer_rank_params(s, model::layer_params(s.model, layer));
}

RankParams layer_rank_params(const Scenario& s, const model::LayerParams& lp) {
  const double tp = static_cast<double>(s.parallel.tp);
  return {(lp.attention + lp.dense_mlp + lp.shared_experts) / tp + lp.router + lp.norms, rank_expert_params(s, lp)};
}

double rank_expert_params(const Scenario& s, const model::LayerParams& lp) {
  const double expert_shards = static_cast<double>(s.parallel.ep * s.parallel.etp);
  return lp.routed_experts * s.moe.placement.replication(s.model.num_moe_experts) / expert_shards;
}

RankParams embedding_rank_params(const Scenario& s) {
  return {static_cast<double>(s.model.vocab_size * s.model.hidden_size) / static_cast<double>(s.parallel.tp), 0};
}

RankParams output_head_rank_params(const Scenario& s) {
  const auto& m = s.model;
  RankParams r;
  // A tied LM head still needs a copy of the embedding on the last stage when pp > 1.
  const bool own_copy = !m.share_embeddings_and_output_weights || s.parallel.pp > 1;
  if (own_copy) r = embedding_rank_params(s);
  r.dense += static_cast<double>(m.hidden_size);  // final norm
  return r;
}

RankParams mtp_module_rank_params(const Scenario& s) {
  const double h = static_cast<double>(s.model.hidden_size);
  RankParams r = layer_rank_params(s, s.model.num_layers - 1);
  r.dense += 2.0 * h * h + 2.0 * h;  // eh_proj [2h → h] and the two norms, replicated over TP
  return r;
}

std::vector<RankParams> rank_params(const Scenario& s, const std::vector<StageLayers>& stages) {
  std::vector<RankParams> out;
  out.reserve(stages.size());
  for (const auto& st : stages) {
    RankParams r;
    for (std::int64_t layer : st.layers) r += layer_rank_params(s, layer);
    if (st.has_embedding) r += embedding_rank_params(s);
    if (st.has_output_head) {
      r += output_head_rank_params(s);
      for (std::int64_t i = 0; i < s.model.mtp_num_layers; ++i) r += mtp_module_rank_params(s);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace moesim::schedule
