#pragma once
// Max-min fair sharing of link capacity by progressive filling (internal to engine/; FlowNetwork is
// the public face). Flat arrays throughout: links are indexed by id, every link keeps the list of
// flows crossing it, paths live in one pool, and nothing allocates while solving once the buffers
// have grown. A solve costs O(busy links · log + Σ path lengths of the flows whose rate it
// recomputes); see docs/engine.md.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace moesim::engine {

class MaxMinSolver {
 public:
  using Link = std::int32_t;
  using Slot = std::int32_t;  ///< a flow's place in the solver, chosen by the caller (dense, reused)

  /// Bookkeeping the owner keeps per flow. It lives in the same cache line as the rate, because a
  /// solve of a million flows is bound by memory latency, not arithmetic; the solver never reads it.
  struct Clock {
    double remaining = 0;    ///< bytes left at `ref`
    double finish = 0;       ///< projected finish (ps, unrounded) at the current rate
    std::int64_t ref = 0;    ///< time of `remaining`
    std::int64_t activation = 0;
  };

  /// `capacity[l]` is link l's capacity in any unit (rates come out in the same unit); each > 0.
  explicit MaxMinSolver(std::vector<double> capacity);

  /// Adds a flow crossing `path` (non-empty, valid ids, no link twice). `slot` must be free.
  /// Spans returned by path() are invalidated by add() and remove().
  void add(Slot slot, std::span<const Link> path);
  /// Removes the flow in `slot`; its rate no longer counts on its links.
  void remove(Slot slot);

  /// Recomputes the max-min fair rates. `visit(clock, old_rate, new_rate, level)` is called once for
  /// every flow whose rate this solve set, in the order the flows were frozen (old_rate is 0 for a
  /// flow added since the last solve; `level` numbers the bottlenecks in filling order). Flows that
  /// are not visited keep their rate and level: when only removals happened since the last solve,
  /// the filling restarts at the level of the first removed flow, because everything frozen before
  /// it is provably unchanged (docs/engine.md). Returns false when nothing had changed.
  template <class Visit>
  bool solve(Visit&& visit);

  /// Bottlenecks of the last solve, in filling order, and the flows each one froze (removed flows
  /// stay listed until the next solve).
  [[nodiscard]] std::size_t level_count() const { return level_begin_.size(); }
  [[nodiscard]] std::span<const Slot> level_flows(std::size_t level) const {
    const std::size_t end = level + 1 < level_begin_.size() ? level_begin_[level + 1] : freeze_order_.size();
    return {freeze_order_.data() + level_begin_[level], end - level_begin_[level]};
  }

  [[nodiscard]] double rate(Slot slot) const { return flows_[slot].rate; }
  [[nodiscard]] Clock& clock(Slot slot) { return flows_[slot].clock; }
  [[nodiscard]] const Clock& clock(Slot slot) const { return flows_[slot].clock; }
  /// Sum of the rates of the flows on `link`, as of the last solve.
  [[nodiscard]] double load(Link link) const { return capacity_[link] - spare_[link]; }
  [[nodiscard]] double capacity(Link link) const { return capacity_[link]; }
  [[nodiscard]] std::int32_t flow_count(Link link) const {
    return static_cast<std::int32_t>(link_flows_[link].size());
  }
  [[nodiscard]] std::int32_t link_count() const { return static_cast<std::int32_t>(capacity_.size()); }
  [[nodiscard]] std::int64_t flow_count() const { return present_; }
  /// Links with at least one flow, in no particular order.
  [[nodiscard]] const std::vector<Link>& busy_links() const { return busy_links_; }
  [[nodiscard]] std::span<const Link> path(Slot slot) const {
    return {path_links_.data() + flows_[slot].path_offset, flows_[slot].path_length};
  }
  /// Solves that restarted part-way instead of from the lowest level (for the benchmark and tests).
  [[nodiscard]] std::int64_t partial_solves() const { return partial_solves_; }

  /// Testing switch: false forces every solve to start from scratch (the partial restart is an
  /// optimisation whose result must match).
  void set_partial_restart(bool on) { partial_restart_ = on; }

 private:
  static constexpr std::uint32_t kNotFrozen = std::numeric_limits<std::uint32_t>::max();

  struct alignas(64) FlowData {
    std::uint32_t path_offset = 0;
    std::uint32_t path_length = 0;     ///< 0: slot is free
    std::uint32_t freeze_position = kNotFrozen;  ///< index in freeze_order_ of the last solve
    double rate = 0;
    Clock clock;
  };
  /// How far ahead the hot loops prefetch flow records and paths (in flows).
  static constexpr std::size_t kPrefetchRecord = 16;
  static constexpr std::size_t kPrefetchPath = 8;
  void prefetch_record(Slot s) const { __builtin_prefetch(&flows_[s]); }
  void prefetch_path(Slot s) const { __builtin_prefetch(path_links_.data() + flows_[s].path_offset); }
  struct HeapItem {
    double share;  ///< a lower bound of the link's fair share (exact when the item is on top and fresh)
    Link link;
  };

  [[nodiscard]] static bool before(const HeapItem& a, const HeapItem& b) {
    return a.share < b.share || (a.share == b.share && a.link < b.link);
  }
  void sift_down(std::size_t i);
  void heapify();
  void heap_pop();
  void next_mark();
  void attach(Link link, Slot slot, std::uint32_t path_index);
  void detach(Link link, std::uint32_t path_index);
  void compact_paths();
  /// Prepares spare_/unfrozen_/heap_ for a full solve; returns the number of flows to freeze.
  std::int64_t reset_full();
  /// Undoes the levels from `level` on; returns the number of flows to freeze again.
  std::int64_t reset_from(std::size_t level);

  std::vector<double> capacity_;
  std::vector<double> spare_;               ///< capacity not taken by frozen flows
  std::vector<std::int32_t> unfrozen_;      ///< flows on the link not yet frozen (during a solve)
  std::vector<std::vector<Slot>> link_flows_;
  std::vector<std::int32_t> busy_index_;    ///< position in busy_links_, or -1
  std::vector<Link> busy_links_;
  std::vector<std::uint32_t> link_mark_;    ///< scratch stamps: duplicate check, touched links
  std::uint32_t mark_ = 0;

  std::vector<FlowData> flows_;
  std::vector<std::uint8_t> frozen_;        ///< 1 while frozen in the current solve: the skip test
                                            ///< in the filling loop stays in cache
  std::vector<Link> path_links_;            ///< all paths, back to back
  std::vector<std::uint32_t> path_slot_;    ///< parallel: this flow's index in link_flows_[link]
  std::uint64_t dead_path_entries_ = 0;
  std::int64_t present_ = 0;

  std::vector<HeapItem> heap_;
  std::vector<Slot> freeze_order_;          ///< slots in the order the last solve froze them
  std::vector<std::uint32_t> level_begin_;  ///< level i froze freeze_order_[level_begin_[i], level_begin_[i+1])
  std::vector<Link> touched_;
  bool added_since_solve_ = true;
  std::uint32_t restart_position_ = kNotFrozen;  ///< min freeze_position of flows removed since
  bool partial_restart_ = true;
  std::int64_t partial_solves_ = 0;
};

template <class Visit>
bool MaxMinSolver::solve(Visit&& visit) {
  std::int64_t to_freeze = 0;
  if (added_since_solve_ || !partial_restart_) {
    to_freeze = reset_full();
  } else if (restart_position_ == kNotFrozen) {
    return false;  // nothing was added or removed
  } else {
    // The level holding the first removed flow: the last level that begins at or before it.
    const auto it = std::upper_bound(level_begin_.begin(), level_begin_.end(), restart_position_);
    const auto level = static_cast<std::size_t>(it - level_begin_.begin()) - 1;
    if (level > 0) ++partial_solves_;
    to_freeze = reset_from(level);
  }
  added_since_solve_ = false;
  restart_position_ = kNotFrozen;

  while (to_freeze > 0) {
    if (heap_.empty()) throw InternalError("max-min solver: flows left unfrozen with no link to bound them");
    const HeapItem top = heap_.front();
    const Link l = top.link;
    if (unfrozen_[l] == 0) {
      heap_pop();
      continue;
    }
    const double share = spare_[l] / static_cast<double>(unfrozen_[l]);
    if (share > top.share) {
      // A stale lower bound: the link's share only grew since the item was written. Repair it in
      // place rather than pushing a duplicate for every change (most links change many times).
      heap_.front().share = share;
      sift_down(0);
      continue;
    }
    heap_pop();
    if (!(share > 0)) {
      throw InternalError("max-min solver: non-positive fair share " + std::to_string(share) + " on link " +
                          std::to_string(l));
    }
    const std::size_t level = level_begin_.size();
    level_begin_.push_back(static_cast<std::uint32_t>(freeze_order_.size()));
    const std::vector<Slot>& list = link_flows_[l];
    const std::size_t n = list.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kPrefetchRecord < n && !frozen_[list[i + kPrefetchRecord]]) prefetch_record(list[i + kPrefetchRecord]);
      if (i + kPrefetchPath < n && !frozen_[list[i + kPrefetchPath]]) prefetch_path(list[i + kPrefetchPath]);
      const Slot s = list[i];
      if (frozen_[s]) continue;
      frozen_[s] = 1;
      FlowData& f = flows_[s];
      f.freeze_position = static_cast<std::uint32_t>(freeze_order_.size());
      freeze_order_.push_back(s);
      const double old_rate = f.rate;
      f.rate = share;
      const Link* p = path_links_.data() + f.path_offset;
      for (std::uint32_t k = 0; k < f.path_length; ++k) {
        spare_[p[k]] -= share;
        --unfrozen_[p[k]];
      }
      visit(f.clock, old_rate, share, level);
      --to_freeze;
    }
  }
  heap_.clear();
  return true;
}

}  // namespace moesim::engine
