#include "schedule/pipeline_schedule.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace moesim::schedule {
namespace {

/// Megatron's schedule table (get_schedule_table): (micro-batch, chunk) in forward order, groups
/// of `group` micro-batches run through every chunk before the next group starts.
std::vector<PipelinePass> schedule_table(std::int64_t microbatches, std::int64_t vpp, std::int64_t group) {
  std::vector<PipelinePass> table;
  table.reserve(static_cast<std::size_t>(microbatches * vpp));
  for (std::int64_t first = 0; first < microbatches; first += group) {
    const std::int64_t last = std::min(first + group, microbatches);
    for (std::int64_t c = 0; c < vpp; ++c) {
      for (std::int64_t mb = first; mb < last; ++mb) {
        table.push_back({static_cast<std::int32_t>(mb), static_cast<std::int32_t>(c), false});
      }
    }
  }
  return table;
}

}  // namespace

std::vector<PipelinePass> pipeline_order(std::int64_t rank, std::int64_t pp, std::int64_t vpp,
                                         std::int64_t microbatches) {
  if (pp < 1 || vpp < 1 || microbatches < 1 || rank < 0 || rank >= pp) {
    throw InternalError("pipeline_order: need 0 <= rank < pp, vpp >= 1, microbatches >= 1");
  }
  const std::vector<PipelinePass> forwards = schedule_table(microbatches, vpp, pp);
  // Backwards go through the same table with the chunks reversed (the last chunk's gradient first).
  std::vector<PipelinePass> backwards = forwards;
  for (PipelinePass& p : backwards) {
    p.chunk = static_cast<std::int32_t>(vpp - 1 - p.chunk);
    p.backward = true;
  }
  const std::int64_t total = microbatches * vpp;
  const std::int64_t warmup =
      vpp == 1 ? std::min(pp - rank - 1, total) : std::min((pp - rank - 1) * 2 + (vpp - 1) * pp, total);
  std::vector<PipelinePass> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  std::size_t f = 0, b = 0;
  for (std::int64_t i = 0; i < warmup; ++i) order.push_back(forwards[f++]);
  while (f < forwards.size()) {
    order.push_back(forwards[f++]);
    order.push_back(backwards[b++]);
  }
  while (b < backwards.size()) order.push_back(backwards[b++]);
  return order;
}

PassSource pass_source(const PipelinePass& p, std::int64_t rank, std::int64_t pp, std::int64_t vpp) {
  PassSource s;
  if (!p.backward) {
    if (rank > 0) {
      s = {true, rank - 1, p};
    } else if (p.chunk > 0) {
      s = {true, pp - 1, {p.microbatch, p.chunk - 1, false}};
    }
  } else {
    if (rank < pp - 1) {
      s = {true, rank + 1, p};
    } else if (p.chunk < vpp - 1) {
      s = {true, 0, {p.microbatch, p.chunk + 1, true}};
    }
  }
  return s;
}

}  // namespace moesim::schedule
