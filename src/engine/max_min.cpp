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
  path_slot_.resize(path_links_.size());
  for (std::uint32_t k = 0; k < f.path_length; ++k) attach(path[k], index, f.path_offset + k);
  index_of_[s] = index;
  ++present_;
  added_since_solve_ = true;
}

void MaxMinSolver::remove(Slot slot) {
  const std::uint32_t index = index_of(slot);
  FlowData& f = flows_[index];
  const bool frozen = f.freeze_position != kNotFrozen;
  for (std::uint32_t k = 0; k < f.path_length; ++k) {
    const Link l = path_links_[f.path_offset + k];
    // Only a frozen flow's rate was taken out of spare_ by the last solve.
    if (frozen) spare_[l] += f.rate;
    detach(l, f.path_offset + k);
  }
  if (frozen) restart_position_ = std::min(restart_position_, f.freeze_position);
  // Leave a hole; reorder() reclaims holes and their path entries after a later solve.
  f.path_length = 0;
  f.slot = -1;
  f.rate = 0;
  index_of_[slot] = kNoIndex;
  --present_;
}

void MaxMinSolver::attach(Link link, std::uint32_t index, std::uint32_t path_index) {
  auto& list = link_flows_[link];
  path_slot_[path_index] = static_cast<std::uint32_t>(list.size());
  list.push_back(index);
  if (list.size() == 1) {
    busy_index_[link] = static_cast<std::int32_t>(busy_links_.size());
    busy_links_.push_back(link);
  }
}

void MaxMinSolver::detach(Link link, std::uint32_t path_index) {
  auto& list = link_flows_[link];
  const std::uint32_t pos = path_slot_[path_index];
  const std::uint32_t moved = list.back();
  list[pos] = moved;
  list.pop_back();
  if (pos < list.size()) {
    // The moved flow's entry for this link must learn its new position; paths are short.
    const FlowData& m = flows_[moved];
    for (std::uint32_t k = 0; k < m.path_length; ++k) {
      if (path_links_[m.path_offset + k] == link) {
        path_slot_[m.path_offset + k] = pos;
        break;
      }
    }
  }
  if (list.empty()) {
    const std::int32_t b = busy_index_[link];
    const Link last = busy_links_.back();
    busy_links_[b] = last;
    busy_index_[last] = b;
    busy_links_.pop_back();
    busy_index_[link] = -1;
    spare_[link] = capacity_[link];  // an idle link carries exactly nothing, whatever rounding said
  }
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
  path_slot_.resize(path_links_.size());
  // Link lists in record order: a bottleneck's own flows are then contiguous in its list.
  for (const Link l : busy_links_) link_flows_[l].clear();
  for (std::size_t pos = 0; pos < n; ++pos) {
    const FlowData& r = flows_[pos];
    for (std::uint32_t k = 0; k < r.path_length; ++k) {
      auto& list = link_flows_[path_links_[r.path_offset + k]];
      path_slot_[r.path_offset + k] = static_cast<std::uint32_t>(list.size());
      list.push_back(static_cast<std::uint32_t>(pos));
    }
    freeze_order_[pos] = static_cast<std::uint32_t>(pos);
  }
  frozen_.assign(n, 1);
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

std::int64_t MaxMinSolver::reset_full() {
  for (const std::uint32_t r : freeze_order_) {
    flows_[r].freeze_position = kNotFrozen;
    frozen_[r] = 0;
  }
  freeze_order_.clear();
  level_begin_.clear();
  heap_.clear();
  for (const Link l : busy_links_) {
    spare_[l] = capacity_[l];
    unfrozen_[l] = static_cast<std::int32_t>(link_flows_[l].size());
    heap_.push_back({spare_[l] / static_cast<double>(unfrozen_[l]), l});
  }
  heapify();
  return present_;
}

std::int64_t MaxMinSolver::reset_from(std::size_t level) {
  const std::uint32_t begin = level_begin_[level];
  next_mark();
  touched_.clear();
  std::int64_t count = 0;
  const std::size_t n = freeze_order_.size();
  const std::uint32_t* order = freeze_order_.data();
  FlowData* flows = flows_.data();
  std::uint8_t* frozen = frozen_.data();
  double* spare = spare_.data();
  std::int32_t* unfrozen = unfrozen_.data();
  std::uint32_t* marks = link_mark_.data();
  const std::uint32_t mark = mark_;
  for (std::size_t i = begin; i < n; ++i) {
    if (i + kPrefetch < n) __builtin_prefetch(flows + order[i + kPrefetch]);
    const std::uint32_t r = order[i];
    FlowData& f = flows[r];
    if (f.path_length == 0) continue;  // a hole: remove() already gave its rate back
    f.freeze_position = kNotFrozen;
    frozen[r] = 0;
    const double rate = f.rate;
    const Link* p = links_of(f);
    const std::uint32_t length = f.path_length;
    for (std::uint32_t k = 0; k < length; ++k) {
      const Link l = p[k];
      spare[l] += rate;
      ++unfrozen[l];
      if (marks[l] != mark) {
        marks[l] = mark;
        touched_.push_back(l);
      }
    }
    ++count;
  }
  freeze_order_.resize(begin);
  level_begin_.resize(level);
  heap_.clear();
  for (const Link l : touched_) heap_.push_back({spare_[l] / static_cast<double>(unfrozen_[l]), l});
  heapify();
  return count;
}

}  // namespace moesim::engine
