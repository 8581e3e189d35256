#include "schedule/stage_plan.hpp"

#include <algorithm>
#include <cstdlib>

namespace moesim::schedule {

namespace {

/// Chunk c (of pp·vpp) goes to pipeline rank c mod pp; layers fill the chunks in order.
std::vector<StageLayers> assign_chunks(const Scenario& s, const std::vector<std::int64_t>& per_chunk) {
  const std::int64_t pp = s.parallel.pp;
  const auto chunks = static_cast<std::int64_t>(per_chunk.size());
  std::vector<StageLayers> stages(static_cast<std::size_t>(pp));
  std::int64_t next = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    auto& st = stages[static_cast<std::size_t>(c % pp)];
    auto& chunk = st.chunks.emplace_back();
    for (std::int64_t i = 0; i < per_chunk[static_cast<std::size_t>(c)]; ++i) {
      chunk.push_back(next);
      st.layers.push_back(next++);
    }
  }
  stages.front().has_embedding = true;
  stages.back().has_output_head = true;
  return stages;
}

}  // namespace

std::vector<StageLayers> plan_stages(const Scenario& s) {
  const std::int64_t pp = s.parallel.pp;
  const std::int64_t chunks = pp * s.parallel.vpp;
  const std::int64_t layers = s.model.num_layers;
  if (s.parallel.pipeline_split_slots() > 0) {
    // The embedding (loss) occupies one layer slot of the first (last) chunk; validate_layout has
    // checked that layers + slots split evenly.
    std::vector<std::int64_t> even(static_cast<std::size_t>(chunks), (layers + s.parallel.pipeline_split_slots()) / chunks);
    if (s.parallel.account_for_embedding_in_pipeline_split) --even.front();
    if (s.parallel.account_for_loss_in_pipeline_split) --even.back();
    return assign_chunks(s, even);
  }
  std::vector<std::int64_t> per_chunk(static_cast<std::size_t>(chunks), layers / chunks);
  std::int64_t extra = layers % chunks;
  // Middle chunks first (outward from the centre), then the ends.
  std::vector<std::int64_t> order;
  for (std::int64_t c = 1; c + 1 < chunks; ++c) order.push_back(c);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const std::int64_t mid2 = chunks - 1;  // twice the centre index
    return std::abs(2 * a - mid2) < std::abs(2 * b - mid2);
  });
  order.push_back(0);
  if (chunks > 1) order.push_back(chunks - 1);
  for (std::size_t i = 0; extra > 0; i = (i + 1) % order.size(), --extra) {
    ++per_chunk[static_cast<std::size_t>(order[i])];
  }
  return assign_chunks(s, per_chunk);
}

}  // namespace moesim::schedule
