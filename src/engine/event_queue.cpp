#include "engine/event_queue.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace moesim::engine {

bool EventQueue::Later::operator()(const Event& a, const Event& b) const {
  if (a.time != b.time) return a.time > b.time;
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.sequence > b.sequence;
}

std::uint64_t EventQueue::schedule(SimTime at, int priority, Action action) {
  if (at < now_) {
    throw InternalError("event queue: event scheduled at " + std::to_string(at) + " ps, before now (" +
                        std::to_string(now_) + " ps)");
  }
  if (at == kNever) throw InternalError("event queue: event scheduled at kNever");
  if (!action) throw InternalError("event queue: empty action");
  const std::uint64_t sequence = next_sequence_++;
  heap_.push_back(Event{at, priority, sequence, std::move(action)});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  return sequence;
}

bool EventQueue::run_next() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  // Move the event out before running it: the action may schedule more events and grow heap_.
  Event event = std::move(heap_.back());
  heap_.pop_back();
  now_ = event.time;
  ++events_run_;
  event.action();
  return true;
}

void EventQueue::run(SimTime until) {
  while (!heap_.empty() && heap_.front().time <= until) run_next();
  // The clock stands at `until` afterwards, so nothing can later be scheduled inside the window
  // that was declared finished.
  if (until != kNever && until > now_) now_ = until;
}

void EventQueue::run_polling(std::uint64_t every, const std::function<void()>& poll) {
  std::uint64_t until_poll = every;
  while (run_next()) {
    if (--until_poll == 0) {
      poll();
      until_poll = every;
    }
  }
}

}  // namespace moesim::engine
