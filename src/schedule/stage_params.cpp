#include "schedule/stage_params.hpp"

#include "model/counts.hpp"

namespace moesim::schedule {

std::vector<RankParams> rank_params(const Scenario& s, const std::vector<StageLayers>& stages) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const double tp = static_cast<double>(p.tp);
  const double expert_shards = static_cast<double>(p.ep * p.etp);
  const double embedding = static_cast<double>(m.vocab_size * m.hidden_size);
  std::vector<RankParams> out;
  out.reserve(stages.size());
  for (const auto& st : stages) {
    RankParams r;
    for (std::int64_t layer : st.layers) {
      const model::LayerParams lp = model::layer_params(m, layer);
      r.dense += (lp.attention + lp.dense_mlp + lp.shared_experts) / tp + lp.router + lp.norms;
      r.expert += lp.routed_experts / expert_shards;
    }
    if (st.has_embedding) r.dense += embedding / tp;
    if (st.has_output_head) {
      // A tied LM head still needs a copy of the embedding on the last stage when pp > 1.
      const bool own_copy = !m.share_embeddings_and_output_weights || s.parallel.pp > 1;
      if (own_copy) r.dense += embedding / tp;
      r.dense += static_cast<double>(m.hidden_size);  // final norm
      for (std::int64_t i = 0; i < m.mtp_num_layers; ++i) {
        const model::LayerParams lp = model::layer_params(m, m.num_layers - 1);
        r.dense += (lp.attention + lp.dense_mlp + lp.shared_experts) / tp + lp.router + lp.norms +
                   2.0 * static_cast<double>(m.hidden_size * m.hidden_size) + 2.0 * static_cast<double>(m.hidden_size);
        r.expert += lp.routed_experts / expert_shards;
      }
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace moesim::schedule
