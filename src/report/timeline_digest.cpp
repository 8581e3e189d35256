#include "report/timeline_digest.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>
#include <vector>

namespace moesim::report {

nlohmann::json timeline_digest(const Timeline& t, const TimelineDigestLimits& limits) {
  using Json = nlohmann::json;
  // The ranks that finish last decide the step time: show those.
  std::vector<std::int64_t> end(t.processes.size(), 0);
  for (const auto& e : t.events) {
    auto& x = end.at(static_cast<std::size_t>(e.process));
    x = std::max(x, e.start_ps + e.duration_ps);
  }
  std::vector<std::size_t> order(t.processes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return end[a] > end[b]; });
  order.resize(std::min(order.size(), limits.max_processes));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return t.processes[a].rank < t.processes[b].rank; });
  std::vector<int> remap(t.processes.size(), -1);
  Json processes = Json::array();
  for (std::size_t i = 0; i < order.size(); ++i) {
    remap[order[i]] = static_cast<int>(i);
    const auto& p = t.processes[order[i]];
    processes.push_back(Json{{"name", p.name}, {"rank", p.rank}, {"tracks", p.tracks}});
  }

  // Events of the shown ranks, per track in time order.
  struct Block {
    const TimelineEvent* first;
    std::int64_t end_ps;
    double bytes, flops;
    std::int64_t ops;
    bool same_name;
  };
  std::vector<const TimelineEvent*> kept;
  std::int64_t t0 = INT64_MAX, t1 = 0;
  for (const auto& e : t.events) {
    if (remap[static_cast<std::size_t>(e.process)] < 0) continue;
    kept.push_back(&e);
    t0 = std::min(t0, e.start_ps);
    t1 = std::max(t1, e.start_ps + e.duration_ps);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const TimelineEvent* a, const TimelineEvent* b) {
    return std::tie(a->process, a->track, a->start_ps) < std::tie(b->process, b->track, b->start_ps);
  });
  // Too many ops for a page: merge neighbours of one category on one track whose gap is below
  // ~1/4000 of the step (under a pixel at full zoom-out), so the picture stays whole; the tooltip
  // says how many ops a block holds. Only if that is not enough are the shortest blocks left out.
  const std::int64_t gap = kept.size() > limits.max_events ? std::max<std::int64_t>(1, (t1 - t0) / 4000) : -1;
  std::vector<Block> blocks;
  for (const TimelineEvent* e : kept) {
    if (!blocks.empty()) {
      Block& b = blocks.back();
      if (gap >= 0 && b.first->process == e->process && b.first->track == e->track && b.first->category == e->category &&
          e->start_ps - b.end_ps <= gap) {
        b.end_ps = std::max(b.end_ps, e->start_ps + e->duration_ps);
        b.bytes += e->bytes;
        b.flops += e->flops;
        b.same_name = b.same_name && b.first->name == e->name;
        ++b.ops;
        continue;
      }
    }
    blocks.push_back({e, e->start_ps + e->duration_ps, e->bytes, e->flops, 1, true});
  }
  std::vector<std::size_t> shown(blocks.size());
  std::iota(shown.begin(), shown.end(), std::size_t{0});
  if (shown.size() > limits.max_events) {
    std::stable_sort(shown.begin(), shown.end(), [&](std::size_t a, std::size_t b) {
      return blocks[a].end_ps - blocks[a].first->start_ps > blocks[b].end_ps - blocks[b].first->start_ps;
    });
    shown.resize(limits.max_events);
    std::sort(shown.begin(), shown.end());
  }
  std::size_t ops_shown = 0;
  Json events = Json::array();
  for (std::size_t i : shown) {
    const Block& b = blocks[i];
    const TimelineEvent& e = *b.first;
    ops_shown += static_cast<std::size_t>(b.ops);
    events.push_back(Json::array({remap[static_cast<std::size_t>(e.process)], e.track, b.same_name ? e.name : e.category, e.category,
                                  static_cast<double>(e.start_ps) * 1e-6, static_cast<double>(b.end_ps - e.start_ps) * 1e-6, b.bytes,
                                  b.flops, b.ops == 1 ? e.microbatch : -1, e.backward ? 1 : 0, b.ops}));
  }
  const std::size_t total = kept.size();
  return Json{{"processes", processes}, {"names", t.names}, {"events", events},
              {"events_total", total}, {"events_shown", ops_shown}};
}

}  // namespace moesim::report
