#include "engine/max_min.hpp"

#include <cmath>
#include <utility>

namespace moesim::engine {

MaxMinSolver::MaxMinSolver(std::vector<double> capacity) : capacity_(std::move(capacity)) {
  for (std::size_t l = 0; l < capacity_.size(); ++l) {
    if (!(capacity_[l] > 0) || !std::isfinite(capacity_[l])) {
      throw InternalError("max-min solver: link " + std::to_string(l) + " has capacity " +
                          std::to_string(capacity_[l]) + " (must be finite and > 0)");
    }
  }
  if (capacity_.size() > static_cast<std::size_t>(std::numeric_limits<Link>::max())) {
    throw InternalError("max-min solver: too many links");
  }
  spare_ = capacity_;
  unfrozen_.assign(capacity_.size(), 0);
  link_flows_.resize(capacity_.size());
  live_.assign(capacity_.size(), 0);
  busy_index_.assign(capacity_.size(), -1);
  link_mark_.assign(capacity_.size(), 0);
}

std::uint32_t MaxMinSolver::index_of(Slot slot) const {
  if (slot < 0 || static_cast<std::size_t>(slot) >= index_of_.size() || index_of_[slot] == kNoIndex) {
    throw InternalError("max-min solver: no flow in slot " + std::to_string(slot));
  }
  return index_of_[slot];
}

void MaxMinSolver::next_mark() {
  if (++mark_ == 0) {  // wrapped: old stamps could collide, so clear them once every 2^32 uses
    std::fill(link_mark_.begin(), link_mark_.end(), 0U);
    mark_ = 1;
  }
}

void MaxMinSolver::add(Slot slot, std::span<const Link> path, double initial_rate) {
  if (slot < 0) throw InternalError("max-min solver: negative slot " + std::to_string(slot));
  if (path.empty()) throw InternalError("max-min solver: a flow needs at least one link");
  const auto s = static_cast<std::size_t>(slot);
  if (s >= index_of_.size()) index_of_.resize(s + 1, kNoIndex);
  if (index_of_[s] != kNoIndex) throw InternalError("max-min solver: slot " + std::to_string(slot) + " in use");
  next_mark();
  for (const Link l : path) {
    if (l < 0 || l >= link_count()) {
      throw InternalError("max-min solver: link id " + std::to_string(l) + " out of range [0, " +
                          std::to_string(link_count()) + ")");
    }
    if (link_mark_[l] == mark_) throw InternalError("max-min solver: path crosses link " + std::to_string(l) + " twice");
    link_mark_[l] = mark_;
  }
  if (flows_.size() >= kNoIndex - 1 || path_links_.size() + path.size() >= kNoIndex) {
    throw InternalError("max-min solver: more than 2^32 flows or path entries in flight");
  }
  const auto index = static_cast<std::uint32_t>(flows_.size());
  FlowData& f = flows_.emplace_back();
  frozen_.push_back(0);
  f.path_offset = static_cast<std::uint32_t>(path_links_.size());
  f.path_length = static_cast<std::uint32_t>(path.size());
  f.slot = slot;
  f.rate = initial_rate;
  if (f.path_length <= kInlineLinks) std::copy(path.begin(), path.end(), f.inline_links);
  path_links_.insert(path_links_.end(), path.begin(), path.end());
  for (const Link l : path) attach(l, index);
  index_of_[s] = index;
  ++present_;
  added_since_solve_ = true;
}

void MaxMinSolver::reserve(std::size_t flows, std::size_t path_links) {
  flows_.reserve(flows_.size() + flows);
  frozen_.reserve(frozen_.size() + flows);
  path_links_.reserve(path_links_.size() + path_links);
}

void MaxMinSolver::remove(Slot slot) {
  const std::uint32_t index = index_of(slot);
  FlowData& f = flows_[index];
  const bool frozen = f.freeze_position != kNotFrozen;
  for (std::uint32_t k = 0; k < f.path_length; ++k) {
    const Link l = path_links_[f.path_offset + k];
    // Only a frozen flow's rate was taken out of spare_ by the last solve.
    if (frozen) spare_[l] += f.rate;
    detach(l);
  }
  frozen_[index] = kRemoved;
  if (frozen) restart_position_ = std::min(restart_position_, f.freeze_position);
  // Leave a hole; reorder() reclaims holes and their path entries after a later solve.
  f.path_length = 0;
  f.slot = -1;
  f.rate = 0;
  index_of_[slot] = kNoIndex;
  --present_;
}

void MaxMinSolver::collect_unfrozen(Link link) {
  const std::uint32_t* list = link_flows_[link].data();
  const std::size_t n = link_flows_[link].size();
  std::uint8_t* marks = frozen_.data();
  const std::uint8_t epoch = frozen_epoch_;
  std::int32_t wanted = unfrozen_[link];
  // Backwards, stopping at the link's last unfrozen flow: lists are kept in record order, which
  // reorder() makes the filling order, so the flows a partial restart re-freezes (and new ones)
  // sit at the ends and the unchanged prefix is rarely read.
  for (std::size_t i = n; i-- > 0 && wanted > 0;) {
    if (i >= kPrefetchMark) __builtin_prefetch(marks + list[i - kPrefetchMark]);
    const std::uint32_t r = list[i];
    if (marks[r] == epoch || marks[r] == kRemoved) continue;
    marks[r] = epoch;
    freeze_order_.push_back(r);
    --wanted;
  }
  if (wanted != 0) throw InternalError("max-min solver: link " + std::to_string(link) + " lists too few flows");
}

void MaxMinSolver::attach(Link link, std::uint32_t index) {
  link_flows_[link].push_back(index);
  if (++live_[link] == 1) {
    busy_index_[link] = static_cast<std::int32_t>(busy_links_.size());
    busy_links_.push_back(link);
  }
}

void MaxMinSolver::detach(Link link) {
  // The list entry stays until reorder(); only the count and the busy set change now.
  if (--live_[link] > 0) return;
  const std::int32_t b = busy_index_[link];
  const Link last = busy_links_.back();
  busy_links_[b] = last;
  busy_index_[last] = b;
  busy_links_.pop_back();
  busy_index_[link] = -1;
  spare_[link] = capacity_[link];  // an idle link carries exactly nothing, whatever rounding said
}

bool MaxMinSolver::wants_reorder() const {
  // Holes cost memory and cache; clearing them when they reach an eighth of the live records keeps
  // the total reorder work within a constant factor of the removals.
  const auto holes = static_cast<std::int64_t>(flows_.size()) - present_;
  return holes > present_ / 8 + 1024;
}

void MaxMinSolver::reorder() {
  // Called right after a solve, when freeze_order_ lists exactly the present flows.
  if (static_cast<std::int64_t>(freeze_order_.size()) != present_) {
    throw InternalError("max-min solver: reorder with " + std::to_string(freeze_order_.size()) +
                        " frozen flows of " + std::to_string(present_));
  }
  const std::size_t n = freeze_order_.size();
  LargeVector<FlowData>& flows = flows_spare_;
  LargeVector<Link>& links = path_links_spare_;
  flows.resize(n);
  links.clear();
  for (std::size_t pos = 0; pos < n; ++pos) {
    FlowData r = flows_[freeze_order_[pos]];
    const auto offset = static_cast<std::uint32_t>(links.size());
    links.insert(links.end(), path_links_.begin() + r.path_offset, path_links_.begin() + r.path_offset + r.path_length);
    r.path_offset = offset;
    r.freeze_position = static_cast<std::uint32_t>(pos);
    index_of_[r.slot] = static_cast<std::uint32_t>(pos);
    flows[pos] = r;
  }
  flows_.swap(flows);
  path_links_.swap(links);
  // Link lists in record order: a bottleneck's own flows are then contiguous in its list. Idle
  // links are cleared too: they may still list removed flows.
  for (auto& list : link_flows_) list.clear();
  for (std::size_t pos = 0; pos < n; ++pos) {
    const FlowData& r = flows_[pos];
    for (std::uint32_t k = 0; k < r.path_length; ++k) {
      link_flows_[path_links_[r.path_offset + k]].push_back(static_cast<std::uint32_t>(pos));
    }
    freeze_order_[pos] = static_cast<std::uint32_t>(pos);
  }
  frozen_.assign(n, frozen_epoch_);
}

void MaxMinSolver::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  const HeapItem item = heap_[i];
  while (true) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], item)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = item;
}

void MaxMinSolver::heapify() {
  for (std::size_t i = heap_.size() / 2; i-- > 0;) sift_down(i);
}

void MaxMinSolver::heap_pop() {
  heap_.front() = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0);
}

void MaxMinSolver::next_epoch() {
  if (++frozen_epoch_ == kRemoved) {  // wrapped: an old mark could equal the new epoch
    for (std::uint8_t& m : frozen_) m = m == kRemoved ? kRemoved : std::uint8_t{0};
    frozen_epoch_ = 1;
  }
}

std::int64_t MaxMinSolver::reset_full() {
  // A new epoch unfreezes every record at once. freeze_position is left stale: the filling that
  // follows rewrites it for every present flow before anyone reads it.
  next_epoch();
  freeze_order_.clear();
  level_begin_.clear();
  heap_.clear();
  for (const Link l : busy_links_) {
    spare_[l] = capacity_[l];
    unfrozen_[l] = live_[l];
    heap_.push_back({spare_[l] / static_cast<double>(unfrozen_[l]), l});
  }
  heapify();
  return present_;
}

std::int64_t MaxMinSolver::reset_from(std::size_t level) {
  // Two ways to reach the state before `level`: take the later levels' flows back out (undo), or
  // start empty and put the earlier levels' flows back in (redo). Both touch one record per flow,
  // so take the side with fewer flows. Restarts near level 0 are common (the earliest finishers
  // are spread over all levels), and redoing them is nearly free.
  const std::size_t begin = level_begin_[level];
  const std::size_t rest = freeze_order_.size() - begin;
  const std::int64_t count = begin < rest ? redo_before(level) : undo_from(level);
  freeze_order_.resize(begin);
  level_begin_.resize(level);
  heap_.clear();
  for (const Link l : busy_links_) {
    if (unfrozen_[l] > 0) heap_.push_back({spare_[l] / static_cast<double>(unfrozen_[l]), l});
  }
  heapify();
  return count;
}

std::int64_t MaxMinSolver::undo_from(std::size_t level) {
  const std::size_t n = freeze_order_.size();
  const std::uint32_t* order = freeze_order_.data();
  const FlowData* flows = flows_.data();
  std::uint8_t* frozen = frozen_.data();
  const auto unfrozen_mark = static_cast<std::uint8_t>(frozen_epoch_ - 1);  // anything but the epoch
  double* spare = spare_.data();
  std::int32_t* unfrozen = unfrozen_.data();
  std::int64_t count = 0;
  for (std::size_t i = level_begin_[level]; i < n; ++i) {
    if (i + kPrefetch < n) __builtin_prefetch(flows + order[i + kPrefetch]);
    const std::uint32_t r = order[i];
    const FlowData& f = flows[r];
    if (f.path_length == 0) continue;  // a hole: remove() already gave its rate back
    frozen[r] = unfrozen_mark;
    const double rate = f.rate;
    const Link* p = links_of(f);
    for (std::uint32_t k = 0; k < f.path_length; ++k) {
      spare[p[k]] += rate;
      ++unfrozen[p[k]];
    }
    ++count;
  }
  return count;
}

std::int64_t MaxMinSolver::redo_before(std::size_t level) {
  next_epoch();
  for (const Link l : busy_links_) {
    spare_[l] = capacity_[l];
    unfrozen_[l] = live_[l];
  }
  const std::uint32_t* order = freeze_order_.data();
  const FlowData* flows = flows_.data();
  std::uint8_t* frozen = frozen_.data();
  const std::uint8_t epoch = frozen_epoch_;
  double* spare = spare_.data();
  std::int32_t* unfrozen = unfrozen_.data();
  const std::size_t end = level_begin_[level];
  std::int64_t kept = 0;
  for (std::size_t i = 0; i < end; ++i) {
    if (i + kPrefetch < end) __builtin_prefetch(flows + order[i + kPrefetch]);
    const std::uint32_t r = order[i];
    const FlowData& f = flows[r];
    if (f.path_length == 0) continue;  // a hole: not on any link any more
    frozen[r] = epoch;
    const double rate = f.rate;
    const Link* p = links_of(f);
    for (std::uint32_t k = 0; k < f.path_length; ++k) {
      spare[p[k]] -= rate;
      --unfrozen[p[k]];
    }
    ++kept;
  }
  return present_ - kept;
}

}  // namespace moesim::engine
