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

void MaxMinSolver::next_mark() {
  if (++mark_ == 0) {  // wrapped: old stamps could collide, so clear them once every 2^32 uses
    std::fill(link_mark_.begin(), link_mark_.end(), 0U);
    mark_ = 1;
  }
}

void MaxMinSolver::add(Slot slot, std::span<const Link> path) {
  if (slot < 0) throw InternalError("max-min solver: negative slot " + std::to_string(slot));
  if (path.empty()) throw InternalError("max-min solver: a flow needs at least one link");
  const auto index = static_cast<std::size_t>(slot);
  if (index >= flows_.size()) {
    flows_.resize(index + 1);
    frozen_.resize(index + 1, 0);
  }
  if (flows_[index].path_length != 0) throw InternalError("max-min solver: slot " + std::to_string(slot) + " in use");
  next_mark();
  for (const Link l : path) {
    if (l < 0 || l >= link_count()) {
      throw InternalError("max-min solver: link id " + std::to_string(l) + " out of range [0, " +
                          std::to_string(link_count()) + ")");
    }
    if (link_mark_[l] == mark_) throw InternalError("max-min solver: path crosses link " + std::to_string(l) + " twice");
    link_mark_[l] = mark_;
  }
  if (path_links_.size() + path.size() > std::numeric_limits<std::uint32_t>::max()) compact_paths();
  if (path_links_.size() + path.size() > std::numeric_limits<std::uint32_t>::max()) {
    throw InternalError("max-min solver: more than 2^32 path entries in flight");
  }
  FlowData& f = flows_[index];
  f.path_offset = static_cast<std::uint32_t>(path_links_.size());
  f.path_length = static_cast<std::uint32_t>(path.size());
  f.freeze_position = kNotFrozen;
  f.rate = 0;
  path_links_.insert(path_links_.end(), path.begin(), path.end());
  path_slot_.resize(path_links_.size());
  for (std::uint32_t k = 0; k < f.path_length; ++k) attach(path[k], slot, f.path_offset + k);
  ++present_;
  added_since_solve_ = true;
}

void MaxMinSolver::remove(Slot slot) {
  if (slot < 0 || static_cast<std::size_t>(slot) >= flows_.size() || flows_[slot].path_length == 0) {
    throw InternalError("max-min solver: no flow in slot " + std::to_string(slot));
  }
  const FlowData f = flows_[slot];
  const bool frozen = f.freeze_position != kNotFrozen;
  for (std::uint32_t k = 0; k < f.path_length; ++k) {
    const Link l = path_links_[f.path_offset + k];
    // Only a frozen flow's rate was taken out of spare_ by the last solve.
    if (frozen) spare_[l] += f.rate;
    detach(l, f.path_offset + k);
  }
  if (frozen) restart_position_ = std::min(restart_position_, f.freeze_position);
  flows_[slot] = FlowData{};
  frozen_[slot] = 0;
  --present_;
  dead_path_entries_ += f.path_length;
  // Compact once the dead entries outnumber the live ones, so the pool stays within twice the live
  // paths and the copying is paid for by the removals.
  if (dead_path_entries_ > 4096 && dead_path_entries_ * 2 > path_links_.size()) compact_paths();
}

void MaxMinSolver::attach(Link link, Slot slot, std::uint32_t path_index) {
  auto& list = link_flows_[link];
  path_slot_[path_index] = static_cast<std::uint32_t>(list.size());
  list.push_back(slot);
  if (list.size() == 1) {
    busy_index_[link] = static_cast<std::int32_t>(busy_links_.size());
    busy_links_.push_back(link);
  }
}

void MaxMinSolver::detach(Link link, std::uint32_t path_index) {
  auto& list = link_flows_[link];
  const std::uint32_t pos = path_slot_[path_index];
  const Slot moved = list.back();
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

void MaxMinSolver::compact_paths() {
  std::vector<Link> links;
  std::vector<std::uint32_t> slots;
  links.reserve(path_links_.size() - dead_path_entries_);
  slots.reserve(path_links_.size() - dead_path_entries_);
  for (FlowData& f : flows_) {
    if (f.path_length == 0) continue;
    const auto offset = static_cast<std::uint32_t>(links.size());
    links.insert(links.end(), path_links_.begin() + f.path_offset, path_links_.begin() + f.path_offset + f.path_length);
    slots.insert(slots.end(), path_slot_.begin() + f.path_offset, path_slot_.begin() + f.path_offset + f.path_length);
    f.path_offset = offset;
  }
  path_links_ = std::move(links);
  path_slot_ = std::move(slots);
  dead_path_entries_ = 0;
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
  for (const Slot s : freeze_order_) {
    flows_[s].freeze_position = kNotFrozen;
    frozen_[s] = 0;
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
  for (std::size_t i = begin; i < n; ++i) {
    if (i + kPrefetchRecord < n) prefetch_record(freeze_order_[i + kPrefetchRecord]);
    if (i + kPrefetchPath < n) prefetch_path(freeze_order_[i + kPrefetchPath]);
    FlowData& f = flows_[freeze_order_[i]];
    if (f.path_length == 0) continue;  // removed: remove() already gave its rate back
    f.freeze_position = kNotFrozen;
    frozen_[freeze_order_[i]] = 0;
    const Link* p = path_links_.data() + f.path_offset;
    for (std::uint32_t k = 0; k < f.path_length; ++k) {
      spare_[p[k]] += f.rate;
      ++unfrozen_[p[k]];
      if (link_mark_[p[k]] != mark_) {
        link_mark_[p[k]] = mark_;
        touched_.push_back(p[k]);
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
