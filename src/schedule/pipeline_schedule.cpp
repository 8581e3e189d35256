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
  const std::int64_t warmup = warmup_passes(rank, pp, vpp, microbatches);
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

std::int64_t warmup_passes(std::int64_t rank, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches) {
  const std::int64_t total = microbatches * vpp;
  return vpp == 1 ? std::min(pp - rank - 1, total) : std::min((pp - rank - 1) * 2 + (vpp - 1) * pp, total);
}

PipelinePass table_pass(std::int64_t index, bool backward, std::int64_t pp, std::int64_t vpp,
                        std::int64_t microbatches) {
  // schedule_table with group = pp: full groups of pp micro-batches × vpp chunks, then the
  // remainder group of microbatches mod pp micro-batches × vpp chunks.
  const std::int64_t full = (microbatches / pp) * pp * vpp;
  std::int64_t mb = 0, chunk = 0;
  if (index < full) {
    const std::int64_t within = index % (pp * vpp);
    chunk = within / pp;
    mb = (index / (pp * vpp)) * pp + within % pp;
  } else {
    const std::int64_t rest = microbatches % pp;
    chunk = (index - full) / rest;
    mb = (microbatches / pp) * pp + (index - full) % rest;
  }
  if (backward) chunk = vpp - 1 - chunk;
  return {static_cast<std::int32_t>(mb), static_cast<std::int32_t>(chunk), backward};
}

TableCursor::TableCursor(std::int64_t index, std::int64_t pp, std::int64_t vpp, std::int64_t microbatches)
    : pp_(pp), vpp_(vpp), microbatches_(microbatches) {
  // table_pass's arithmetic with as few divisions as possible (a walk repositions a few cursors per
  // stage, and integer division is the slowest step of it).
  const std::int64_t total = microbatches * vpp;
  const std::int64_t at = std::min(index, total - 1);
  const std::int64_t groups = microbatches / pp;  // full groups
  const std::int64_t full = groups * pp * vpp;
  if (at == 0) {
    size_ = std::min(pp, microbatches);
  } else if (at < full) {
    const std::int64_t group = at / (pp * vpp);
    const std::int64_t within = at - group * pp * vpp;
    chunk_ = within / pp;
    offset_ = within - chunk_ * pp;
    first_ = group * pp;
    size_ = pp;
  } else {
    const std::int64_t rest = microbatches - groups * pp;
    chunk_ = (at - full) / rest;
    offset_ = at - full - chunk_ * rest;
    first_ = groups * pp;
    size_ = rest;
  }
  if (index >= total) next();  // the end: one past the last entry
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
