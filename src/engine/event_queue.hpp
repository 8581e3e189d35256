#pragma once
// The discrete-event core: events ordered by (time, priority, insertion sequence), so equal-time
// events run in a defined order and a run is deterministic.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/sim_time.hpp"

namespace moesim::engine {

class EventQueue {
 public:
  using Action = std::function<void()>;

  /// Schedules `action` at absolute time `at` (>= now()); lower `priority` runs first among equal
  /// times, then insertion order. Returns the event's sequence number.
  std::uint64_t schedule(SimTime at, int priority, Action action);
  /// Runs the earliest event; false when the queue is empty.
  bool run_next();
  /// Runs until empty or until the next event is later than `until`; the clock then stands at
  /// `until` (unless kNever), so nothing can later be scheduled inside the finished window.
  void run(SimTime until = kNever);
  /// Runs until empty, calling `poll` after every `every` events: the caller's hook for progress and
  /// for stopping (a poll that throws ends the run; the queue is then abandoned).
  void run_polling(std::uint64_t every, const std::function<void()>& poll);

  [[nodiscard]] SimTime now() const { return now_; }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] std::uint64_t events_run() const { return events_run_; }

 private:
  struct Event {
    SimTime time;
    int priority;
    std::uint64_t sequence;
    Action action;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const;
  };
  std::vector<Event> heap_;
  SimTime now_ = 0;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t events_run_ = 0;
};

}  // namespace moesim::engine
