#pragma once
// Max-min fair sharing of link capacity by progressive filling (internal to engine/; FlowNetwork is
// the public face). Flat arrays throughout: links are indexed by id, every link keeps the list of
// flows crossing it, flow records and paths live in two pools kept in filling order, and nothing
// allocates while solving once the buffers have grown. A solve costs
// O(B log B + Σ path lengths of the flows it re-freezes), B = busy links; see docs/engine.md.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "engine/large_allocator.hpp"

namespace moesim::engine {

class MaxMinSolver {
 public:
  using Link = std::int32_t;
  using Slot = std::int32_t;  ///< the caller's name for a flow (dense, reusable once removed)

  /// Bookkeeping the owner keeps per flow. It lives in the same cache line as the rate and the
  /// path because a solve of a million flows is bound by memory latency, not arithmetic; the solver
  /// never reads it. The bytes left at time t are rate·(finish - t), so no more is needed.
  struct Clock {
    double finish = 0;      ///< projected finish (ps, unrounded) at the current rate
    double activation = 0;  ///< when the flow became active (ps, a whole number)
  };

  /// `capacity[l]` is link l's capacity in any unit (rates come out in the same unit); each > 0.
  explicit MaxMinSolver(std::vector<double> capacity);

  /// Adds a flow crossing `path` (non-empty, valid ids, no link twice) under the caller's `slot`,
  /// which must not name a present flow. Its clock starts zeroed; `initial_rate` is what rate()
  /// reports, and visit() receives as old_rate, until a solve sets the flow's fair rate (the owner
  /// can then keep one formula for new and old flows). It does not count on the links.
  void add(Slot slot, std::span<const Link> path, double initial_rate = 0);
  /// Removes the flow `slot`; its rate no longer counts on its links.
  void remove(Slot slot);
  /// Makes room for `flows` more flows with `path_links` path entries in all, so that a wave of
  /// adds grows the big arrays once instead of by doubling (each doubling copies them and faults
  /// in fresh pages).
  void reserve(std::size_t flows, std::size_t path_links);

  /// Recomputes the max-min fair rates. `visit(slot, clock, old_rate, new_rate, level)` is called
  /// once for every flow whose rate this solve set, in the order the flows were frozen (old_rate
  /// is the initial rate for a flow added since the last solve; `level` numbers the bottlenecks in
  /// filling order). Flows that are not visited keep their rate and level: when only removals
  /// happened since the last solve, the filling restarts at the level of the first removed flow,
  /// because everything frozen before it is provably unchanged (docs/engine.md). Returns false
  /// when nothing had changed. May renumber records (level_flows() indices), never slots.
  template <class Visit>
  bool solve(Visit&& visit);
  /// The same solve, visited a level at a time: `visit_level(level, rate, records, old_rates)` is
  /// called once per level this solve filled, with the record indices of the flows it froze (in
  /// freezing order; slot_at() and clock_at() read them) and their old rates. A caller that sums
  /// something over a level can keep the sum in a local (a register) instead of behind a
  /// reference, which a per-flow callback forces into memory because every store to a double
  /// might alias it.
  template <class VisitLevel>
  bool solve_by_level(VisitLevel&& visit_level);

  /// Bottlenecks of the last solve, in filling order; level_flows() gives the record indices of
  /// the flows each one froze (valid until the next add, remove or solve).
  [[nodiscard]] std::size_t level_count() const { return level_begin_.size(); }
  [[nodiscard]] std::span<const std::uint32_t> level_flows(std::size_t level) const {
    const std::size_t end = level + 1 < level_begin_.size() ? level_begin_[level + 1] : freeze_order_.size();
    return {freeze_order_.data() + level_begin_[level], end - level_begin_[level]};
  }
  [[nodiscard]] Slot slot_at(std::uint32_t index) const { return flows_[index].slot; }
  [[nodiscard]] const Clock& clock_at(std::uint32_t index) const { return flows_[index].clock; }
  [[nodiscard]] Clock& clock_at(std::uint32_t index) { return flows_[index].clock; }

  [[nodiscard]] double rate(Slot slot) const { return record(slot).rate; }
  [[nodiscard]] Clock& clock(Slot slot) { return flows_[index_of(slot)].clock; }
  [[nodiscard]] const Clock& clock(Slot slot) const { return record(slot).clock; }
  /// Valid until the next add, remove or solve.
  [[nodiscard]] std::span<const Link> path(Slot slot) const {
    const FlowData& f = record(slot);
    return {path_links_.data() + f.path_offset, f.path_length};
  }
  /// Sum of the rates of the flows on `link`: as of the last solve, less the flows removed since.
  [[nodiscard]] double load(Link link) const { return capacity_[link] - spare_[link]; }
  [[nodiscard]] double capacity(Link link) const { return capacity_[link]; }
  [[nodiscard]] std::int32_t flow_count(Link link) const { return live_[link]; }
  [[nodiscard]] std::int32_t link_count() const { return static_cast<std::int32_t>(capacity_.size()); }
  [[nodiscard]] std::int64_t flow_count() const { return present_; }
  /// Links with at least one flow, in no particular order.
  [[nodiscard]] const std::vector<Link>& busy_links() const { return busy_links_; }

  /// Solves that restarted part-way instead of from the lowest level.
  [[nodiscard]] std::int64_t partial_solves() const { return partial_solves_; }
  /// Flows frozen over all solves: the solver's total work is proportional to it.
  [[nodiscard]] std::int64_t flows_frozen() const { return flows_frozen_; }
  /// Testing switch: false makes every solve start from scratch (the partial restart is an
  /// optimisation whose result must match).
  void set_partial_restart(bool on) { partial_restart_ = on; }

 private:
  static constexpr std::uint32_t kNotFrozen = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kNoIndex = std::numeric_limits<std::uint32_t>::max();

  /// Paths up to this long are copied into the record, so freezing a flow touches one cache line.
  static constexpr std::uint32_t kInlineLinks = 6;
  struct alignas(64) FlowData {
    double rate = 0;
    Clock clock;
    std::uint32_t path_offset = 0;               ///< in path_links_ (every path is kept there too)
    std::uint32_t path_length = 0;               ///< 0: a hole left by a removed flow
    std::uint32_t freeze_position = kNotFrozen;  ///< index in freeze_order_ of the last solve
    Slot slot = -1;
    Link inline_links[kInlineLinks] = {};        ///< the path, when path_length <= kInlineLinks
  };
  static_assert(sizeof(FlowData) == 64);
  [[nodiscard]] const Link* links_of(const FlowData& f) const {
    return f.path_length <= kInlineLinks ? f.inline_links : path_links_.data() + f.path_offset;
  }
  struct HeapItem {
    double share;  ///< a lower bound of the link's fair share (exact when on top and fresh)
    Link link;
  };
  /// How far ahead the hot loops prefetch flow records (in flows).
  static constexpr std::size_t kPrefetch = 32;
  /// ... and frozen marks (in list entries).
  static constexpr std::size_t kPrefetchMark = 64;

  [[nodiscard]] static bool before(const HeapItem& a, const HeapItem& b) {
    return a.share < b.share || (a.share == b.share && a.link < b.link);
  }
  [[nodiscard]] std::uint32_t index_of(Slot slot) const;
  [[nodiscard]] const FlowData& record(Slot slot) const { return flows_[index_of(slot)]; }
  void sift_down(std::size_t i);
  void heapify();
  void heap_pop();
  void next_mark();
  /// Marks the unfrozen flows on `link` frozen and appends them to freeze_order_.
  void collect_unfrozen(Link link);
  void attach(Link link, std::uint32_t index);
  void detach(Link link);
  /// Renumbers the records (and their paths) in filling order and drops holes, so the next solves
  /// stream through memory: a level's flows end up side by side.
  void reorder();
  [[nodiscard]] bool wants_reorder() const;
  void next_epoch();
  std::int64_t reset_full();
  std::int64_t reset_from(std::size_t level);
  std::int64_t undo_from(std::size_t level);
  std::int64_t redo_before(std::size_t level);

  std::vector<double> capacity_;
  std::vector<double> spare_;               ///< capacity not taken by frozen flows
  std::vector<std::int32_t> unfrozen_;      ///< flows on the link not yet frozen (during a solve)
  /// Record indices of the flows on each link. remove() leaves its entries in place (they read as
  /// kRemoved in frozen_) and reorder() drops them: unlinking one from the middle of a list costs
  /// random accesses into other flows' records that add up to more than skipping it in the scans.
  std::vector<std::vector<std::uint32_t>> link_flows_;
  std::vector<std::int32_t> live_;          ///< present flows on each link (link_flows_ less removed)
  std::vector<std::int32_t> busy_index_;    ///< position in busy_links_, or -1
  std::vector<Link> busy_links_;
  std::vector<std::uint32_t> link_mark_;    ///< scratch stamps: the duplicate-link check of add()
  std::uint32_t mark_ = 0;

  LargeVector<FlowData> flows_;             ///< records, holes included
  LargeVector<FlowData> flows_spare_;       ///< reorder() builds here, then swaps (no page faults)
  LargeVector<Link> path_links_spare_;
  LargeVector<std::uint8_t> frozen_;        ///< per record: == frozen_epoch_ once frozen in this
                                            ///< solve. One byte keeps the filling loop's skip test
                                            ///< in cache; the epoch lets a solve unfreeze every
                                            ///< flow without visiting them.
  std::uint8_t frozen_epoch_ = 1;           ///< never 0, the value of a new record, nor kRemoved
  static constexpr std::uint8_t kRemoved = 0xff;  ///< frozen_ of a hole: skipped like a frozen flow
  LargeVector<std::uint32_t> index_of_;     ///< caller slot -> record index, or kNoIndex
  LargeVector<Link> path_links_;            ///< all paths, back to back
  std::int64_t present_ = 0;

  std::vector<HeapItem> heap_;
  std::vector<double> old_rates_;            ///< scratch: the old rates of one level's flows
  LargeVector<std::uint32_t> freeze_order_;  ///< records in the order the last solve froze them
  std::vector<std::uint32_t> level_begin_;   ///< level i froze freeze_order_[level_begin_[i], level_begin_[i+1])
  bool added_since_solve_ = true;
  std::uint32_t restart_position_ = kNotFrozen;  ///< min freeze_position of the flows removed since
  bool partial_restart_ = true;
  std::int64_t partial_solves_ = 0;
  std::int64_t flows_frozen_ = 0;
};

template <class Visit>
bool MaxMinSolver::solve(Visit&& visit) {
  return solve_by_level([&](std::size_t level, double rate, std::span<const std::uint32_t> records,
                            std::span<const double> old_rates) {
    for (std::size_t i = 0; i < records.size(); ++i) {
      FlowData& f = flows_[records[i]];
      visit(f.slot, f.clock, old_rates[i], rate, level);
    }
  });
}

template <class VisitLevel>
bool MaxMinSolver::solve_by_level(VisitLevel&& visit_level) {
  std::int64_t to_freeze = 0;
  bool full = false;
  if (added_since_solve_ || !partial_restart_) {
    to_freeze = reset_full();
    full = true;
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
  flows_frozen_ += to_freeze;

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
    // Two passes: the first finds the link's unfrozen flows (touching only its list and the
    // frozen marks), the second freezes them with their records prefetched exactly as far ahead
    // as wanted (a single pass wastes prefetch distance on entries it skips).
    const std::size_t first = freeze_order_.size();
    collect_unfrozen(l);
    const std::size_t last = freeze_order_.size();
    // Raw pointers: the compiler cannot tell that the stores into spare_ leave the vectors'
    // headers alone, and would reload them on every flow.
    const std::uint32_t* order = freeze_order_.data();
    FlowData* flows = flows_.data();
    double* spare = spare_.data();
    std::int32_t* unfrozen = unfrozen_.data();
    if (old_rates_.size() < last - first) old_rates_.resize(last - first);
    double* old_rates = old_rates_.data();
    for (std::size_t j = first; j < last; ++j) {
      if (j + kPrefetch < last) __builtin_prefetch(flows + order[j + kPrefetch]);
      FlowData& f = flows[order[j]];
      f.freeze_position = static_cast<std::uint32_t>(j);
      old_rates[j - first] = f.rate;
      f.rate = share;
      const Link* p = links_of(f);
      const std::uint32_t length = f.path_length;
      for (std::uint32_t k = 0; k < length; ++k) {
        // Every flow of the level crosses the bottleneck: updating it once per flow would chain
        // all of them through one store-to-load dependency, so it is settled once below.
        if (p[k] == l) continue;
        spare[p[k]] -= share;
        --unfrozen[p[k]];
      }
    }
    spare[l] -= share * static_cast<double>(last - first);
    unfrozen[l] = 0;
    // The level's records were just read, so they are still in cache for the visitor.
    visit_level(level, share, std::span<const std::uint32_t>(order + first, last - first),
                std::span<const double>(old_rates, last - first));
    to_freeze -= static_cast<std::int64_t>(last - first);
  }
  heap_.clear();
  if (full || wants_reorder()) reorder();
  return true;
}

}  // namespace moesim::engine
