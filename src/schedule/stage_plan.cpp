#include "schedule/stage_plan.hpp"

namespace moesim::schedule {

namespace {

/// Position of chunk c in the order in which uneven splits hand out their extra layers: middle
/// chunks outward from the centre (of two equally close, the lower first), then chunk 0, then the
/// last chunk. Closed form of that order, so planning a layout sorts nothing and allocates only
/// the result (the planner calls this for every candidate).
std::int64_t extra_layer_position(std::int64_t c, std::int64_t chunks) {
  if (chunks == 1) return 0;
  if (c == 0) return chunks - 2;
  if (c == chunks - 1) return chunks - 1;
  if (chunks % 2 == 1) {
    const std::int64_t centre = (chunks - 1) / 2;
    if (c == centre) return 0;
    const std::int64_t t = c < centre ? centre - c : c - centre;
    return 2 * t - 1 + (c > centre ? 1 : 0);
  }
  const std::int64_t lo = chunks / 2 - 1, hi = chunks / 2;  // the two centre chunks
  const std::int64_t t = c <= lo ? lo - c : c - hi;
  return 2 * t + (c >= hi ? 1 : 0);
}

/// Layers of model chunk c under the plan's split rule.
std::int64_t chunk_layers(const Scenario& s, std::int64_t c) {
  const std::int64_t chunks = s.parallel.pp * s.parallel.vpp;
  const std::int64_t layers = s.model.num_layers;
  if (s.parallel.pipeline_split_slots() > 0) {
    // The embedding (loss) occupies one layer slot of the first (last) chunk; validate_layout has
    // checked that layers + slots split evenly.
    std::int64_t n = (layers + s.parallel.pipeline_split_slots()) / chunks;
    if (c == 0 && s.parallel.account_for_embedding_in_pipeline_split) --n;
    if (c == chunks - 1 && s.parallel.account_for_loss_in_pipeline_split) --n;
    return n;
  }
  // extra < chunks, so each chunk gets at most one extra layer: the first `extra` in the order.
  return layers / chunks + (extra_layer_position(c, chunks) < layers % chunks ? 1 : 0);
}

}  // namespace

std::vector<StageLayers> plan_stages(const Scenario& s) {
  // Chunk c (of pp·vpp) goes to pipeline rank c mod pp; layers fill the chunks in order.
  const std::int64_t pp = s.parallel.pp, vpp = s.parallel.vpp;
  std::vector<StageLayers> stages(static_cast<std::size_t>(pp));
  std::vector<std::int64_t> per_rank(static_cast<std::size_t>(pp), 0);
  for (std::int64_t c = 0; c < pp * vpp; ++c) per_rank[static_cast<std::size_t>(c % pp)] += chunk_layers(s, c);
  for (std::int64_t r = 0; r < pp; ++r) {
    stages[static_cast<std::size_t>(r)].layers.reserve(static_cast<std::size_t>(per_rank[static_cast<std::size_t>(r)]));
    stages[static_cast<std::size_t>(r)].chunks.reserve(static_cast<std::size_t>(vpp));
  }
  std::int64_t next = 0;
  for (std::int64_t c = 0; c < pp * vpp; ++c) {
    auto& st = stages[static_cast<std::size_t>(c % pp)];
    const std::int64_t n = chunk_layers(s, c);
    auto& chunk = st.chunks.emplace_back();
    chunk.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      chunk.push_back(next);
      st.layers.push_back(next++);
    }
  }
  stages.front().has_embedding = true;
  stages.back().has_output_head = true;
  return stages;
}

}  // namespace moesim::schedule
