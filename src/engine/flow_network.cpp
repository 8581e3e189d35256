#include "engine/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <string>

#include "core/error.hpp"
#include "engine/max_min.hpp"

namespace moesim::engine {
namespace {

constexpr double kPs = static_cast<double>(kPicosecondsPerSecond);
constexpr double kSecondsPerPs = 1.0 / kPs;
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr int kEventPriority = 0;
/// Rounding slack when checking that a solve never loads a link above its capacity.
constexpr double kOverloadSlack = 1e-9;

enum class State : std::uint8_t { kFree, kPending, kActive, kCompleting };

std::vector<double> capacities_of(const std::vector<LinkCapacity>& links) {
  std::vector<double> c;
  c.reserve(links.size());
  for (const LinkCapacity& l : links) c.push_back(l.bytes_per_second);
  return c;
}

/// The kSmall smallest batching keys of one level, ascending, with their flows' slots: most
/// batches take a few flows from a level, and these find them without reading the level.
constexpr int kSmall = 8;
struct SmallKeys {
  double key[kSmall] = {kInfinity, kInfinity, kInfinity, kInfinity, kInfinity, kInfinity, kInfinity, kInfinity};
  std::int32_t slot[kSmall] = {};
  int count = 0;
  void insert(double k, std::int32_t s) {
    if (count == kSmall && !(k < key[kSmall - 1])) return;
    int i = count < kSmall ? count++ : kSmall - 1;
    for (; i > 0 && k < key[i - 1]; --i) {
      key[i] = key[i - 1];
      slot[i] = slot[i - 1];
    }
    key[i] = k;
    slot[i] = s;
  }
};
}  // namespace

struct FlowNetwork::Impl {
  /// Time-keeping of an active flow, kept by the solver next to its rate: at the current rate it
  /// finishes at `finish` (picoseconds, unrounded), so rate·(finish - t) bytes are left at t.
  using FlowTime = MaxMinSolver::Clock;

  Impl(EventQueue& q, std::vector<LinkCapacity> links, FlowNetworkOptions o)
      : queue(q), options(o), solver(capacities_of(links)), stats(links.size()) {
    if (!(options.completion_batch_tolerance >= 0.0 && options.completion_batch_tolerance < 1.0)) {
      throw InternalError("flow network: completion_batch_tolerance " +
                          std::to_string(options.completion_batch_tolerance) + " outside [0, 1)");
    }
    solver.set_partial_restart(options.incremental_rates);
    if (options.record_utilisation_timeline) {
      timeline.resize(links.size());
      last_sample.assign(links.size(), 0.0);
    }
  }

  /// The batching key: an active flow joins the batch at time t iff its projected finish is within
  /// tolerance·(t - activation) of t, i.e. iff key <= t·(1 + tolerance). One expression for the
  /// per-level filter and the per-flow test, so the two can never disagree by a rounding.
  [[nodiscard]] double key(const FlowTime& f) const { return batch_key(f, options.completion_batch_tolerance); }
  static double batch_key(const FlowTime& f, double tolerance) { return f.finish + tolerance * f.activation; }

  std::int32_t allocate_slot() {
    if (!free_slots.empty()) {
      const std::int32_t s = free_slots.back();
      free_slots.pop_back();
      return s;
    }
    if (bytes.size() >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
      throw InternalError("flow network: more than 2^31 flows in flight");
    }
    const auto s = static_cast<std::int32_t>(bytes.size());
    bytes.push_back(0);
    ids.push_back(0);
    callbacks.emplace_back();
    states.push_back(State::kFree);
    pending_path.emplace_back();
    return s;
  }

  void release_slot(std::int32_t s) {
    states[s] = State::kFree;
    free_slots.push_back(s);
  }

  void schedule_wakeup(SimTime at) {
    ++generation;
    wake_time = at;
    // Superseded wake-ups stay in the queue and do nothing: cheaper than cancelling.
    queue.schedule(at, kEventPriority, [this, g = generation] {
      if (g != generation) return;
      wake_time = kNever;
      process(queue.now());
    });
  }

  void account(SimTime t) {
    if (t <= accounted_until) return;
    const SimTime dt = t - accounted_until;
    const double dt_s = static_cast<double>(dt) / kPs;
    for (const LinkId l : solver.busy_links()) {
      stats[l].bytes += solver.load(l) * dt_s;
      stats[l].busy_time += dt;
    }
    accounted_until = t;
  }

  void complete(std::int32_t s, SimTime t) {
    states[s] = State::kCompleting;
    if (!callbacks[s]) {
      release_slot(s);
      return;
    }
    queue.schedule(t, kEventPriority, [this, s] {
      Completion cb = std::move(callbacks[s]);
      callbacks[s] = nullptr;
      const FlowId id = ids[s];
      release_slot(s);  // before the callback, which may add the next flow into this slot
      cb(id, queue.now());
    });
  }

  void process(SimTime t) {
    account(t);
    const auto now = static_cast<double>(t);
    const double bound = now + options.completion_batch_tolerance * now;

    // The batch: every flow projected to finish within the window. A level whose smallest key is
    // not due holds no such flow; one whose kSmall smallest are not all due holds only those.
    completed.clear();
    for (std::size_t level = 0; level < level_small.size(); ++level) {
      const SmallKeys& small = level_small[level];
      if (small.key[0] > bound) continue;
      if (small.count < kSmall || small.key[kSmall - 1] > bound) {
        for (int i = 0; i < small.count && small.key[i] <= bound; ++i) {
          if (states[small.slot[i]] == State::kActive) completed.push_back(small.slot[i]);
        }
        continue;
      }
      for (const std::uint32_t r : solver.level_flows(level)) {
        const std::int32_t s = solver.slot_at(r);
        if (s >= 0 && states[s] == State::kActive && key(solver.clock_at(r)) <= bound) completed.push_back(s);
      }
    }
    std::sort(completed.begin(), completed.end(), [this](std::int32_t a, std::int32_t b) { return ids[a] < ids[b]; });
    released_links.clear();
    // The batch leaves at t, but its flows would have left at their own projected finishes; the
    // new rates are applied from the rate-weighted mean of those (the virtual switch time), so the
    // bandwidth of a flow taken out early is not handed to the others for free.
    double freed_rate = 0, freed_rate_time = 0;
    for (const std::int32_t s : completed) {
      freed_rate += solver.rate(s);
      freed_rate_time += solver.rate(s) * solver.clock(s).finish;
    }
    double switch_time = freed_rate > 0 ? freed_rate_time / freed_rate : now;
    for (const std::int32_t s : completed) {
      const FlowTime& f = solver.clock(s);
      // What the rate did not carry by t: positive when the batch takes the flow out early, a
      // sliver below zero when t was rounded up. Booking it keeps each link's bytes exact.
      const double residual = solver.rate(s) * (f.finish - now) * kSecondsPerPs;
      for (const LinkId l : solver.path(s)) {
        stats[l].bytes += residual;
        if (!timeline.empty()) released_links.push_back(l);
      }
      // Reported at its own projected finish (rounded up), not at the batch's time: batching
      // moves when the others learn of the freed bandwidth, never when this flow is seen to end.
      const double due = std::ceil(f.finish);
      const SimTime at = due > now ? static_cast<SimTime>(due) : t;
      solver.remove(s);
      complete(s, at);
    }

    // Activations due now. New flows start at t, so their arrival switches the rates at t.
    if (!pending.empty() && pending.begin()->first <= t) {
      switch_time = now;
      reserve_for(pending.begin()->second);
    }
    while (!pending.empty() && pending.begin()->first <= t) {
      for (const std::int32_t s : pending.begin()->second) {
        if (pending_path[s].length == 0) {
          complete(s, t);  // no link to share: an infinite rate, done after its latency
        } else {
          // As if moving at `bytes` per second for a second from now: the first solve rescales
          // that to the fair rate with the same formula as for every rate change.
          solver.add(s, pending_links_of(s), bytes[s]);
          solver.clock(s) = FlowTime{now + kPs, now};
          pending_links_dead += pending_path[s].length;
          states[s] = State::kActive;
        }
      }
      pending.erase(pending.begin());
    }
    compact_pending_links();

    // Links are booked at the new loads from t, but the re-rated flows switch at switch_time; the
    // difference is booked now so that every link's bytes stay those of the flows that crossed it.
    const bool shifted = switch_time != now;
    if (shifted) {
      load_before.clear();
      for (const LinkId l : solver.busy_links()) load_before.emplace_back(l, solver.load(l));
    }

    // A level's earliest finish and smallest keys are gathered in locals while it is visited.
    const double tau = switch_time;
    const double tolerance = options.completion_batch_tolerance;
    const bool changed = solver.solve_by_level([&](std::size_t level, double rate, std::span<const std::uint32_t> records,
                                                   std::span<const double> old_rates) {
      double min_finish = kInfinity;
      SmallKeys small;
      for (std::size_t i = 0; i < records.size(); ++i) {
        FlowTime& f = solver.clock_at(records[i]);
        // Bytes left at the switch time are old_rate·(finish - switch); they go on at the new rate.
        // A true division: old·(1/new) can round a whole-picosecond finish up past its tick.
        f.finish = tau + (f.finish - tau) * old_rates[i] / rate;
        min_finish = std::min(min_finish, f.finish);
        small.insert(batch_key(f, tolerance), solver.slot_at(records[i]));
      }
      if (level >= level_min_finish.size()) {
        level_min_finish.resize(level + 1);
        level_small.resize(level + 1);
      }
      level_min_finish[level] = min_finish;
      level_small[level] = small;
    });
    if (changed && shifted) {
      for (const auto& [l, before] : load_before) {
        stats[l].bytes += (solver.load(l) - before) * (now - switch_time) * kSecondsPerPs;
      }
    }
    if (changed) {
      if (solver.flow_count() > 0) ++recomputations;  // emptying the network computes no rate
      level_min_finish.resize(solver.level_count());
      level_small.resize(solver.level_count());
      record_utilisation(t);
    }

    // The next batch is due when the earliest projected finish is (rounded up: never early).
    SimTime next = kNever;
    double earliest = kInfinity;
    for (const double f : level_min_finish) earliest = std::min(earliest, f);
    if (earliest < kInfinity) {
      const double at = std::ceil(earliest);
      if (!(at < static_cast<double>(kNever))) throw InternalError("flow network: completion time beyond the SimTime range");
      next = std::max(t, static_cast<SimTime>(at));
    }
    if (!pending.empty()) next = std::min(next, pending.begin()->first);
    if (next != kNever) schedule_wakeup(next);
  }

  void store_pending_path(std::int32_t s, const std::vector<LinkId>& path) {
    if (pending_links.size() + path.size() >= std::numeric_limits<std::uint32_t>::max()) {
      throw InternalError("flow network: more than 2^32 pending path entries");
    }
    pending_path[s] = {static_cast<std::uint32_t>(pending_links.size()), static_cast<std::uint32_t>(path.size())};
    pending_links.insert(pending_links.end(), path.begin(), path.end());
  }

  [[nodiscard]] std::span<const LinkId> pending_links_of(std::int32_t s) const {
    return {pending_links.data() + pending_path[s].offset, pending_path[s].length};
  }

  /// Drops the activated flows' entries once they are half the pool (amortised O(1) per entry).
  void compact_pending_links() {
    if (pending_links_dead == 0 || pending_links_dead * 2 < pending_links.size()) return;
    std::vector<LinkId> kept;
    kept.reserve(pending_links.size() - pending_links_dead);
    for (const auto& wave : pending) {
      for (const std::int32_t s : wave.second) {
        const std::span<const LinkId> links = pending_links_of(s);
        pending_path[s].offset = static_cast<std::uint32_t>(kept.size());
        kept.insert(kept.end(), links.begin(), links.end());
      }
    }
    pending_links.swap(kept);
    pending_links_dead = 0;
  }

  /// Grows the solver once for a wave of activations rather than flow by flow.
  void reserve_for(const std::vector<std::int32_t>& slots) {
    std::size_t path_links = 0;
    for (const std::int32_t s : slots) path_links += pending_path[s].length;
    solver.reserve(slots.size(), path_links);
  }

  void record_utilisation(SimTime t) {
    for (const LinkId l : solver.busy_links()) {
      double u = solver.load(l) / solver.capacity(l);
      if (u > 1.0 + kOverloadSlack) {
        throw InternalError("flow network: link " + std::to_string(l) + " loaded to " + std::to_string(u) +
                            " of its capacity");
      }
      u = std::min(u, 1.0);
      stats[l].peak_utilisation = std::max(stats[l].peak_utilisation, u);
      if (!timeline.empty() && (timeline[l].empty() || last_sample[l] != u)) {
        timeline[l].emplace_back(t, u);
        last_sample[l] = u;
      }
    }
    for (const LinkId l : released_links) {
      if (solver.flow_count(l) == 0 && !timeline[l].empty() && last_sample[l] != 0.0) {
        timeline[l].emplace_back(t, 0.0);
        last_sample[l] = 0.0;
      }
    }
  }

  EventQueue& queue;
  FlowNetworkOptions options;
  MaxMinSolver solver;
  std::vector<LinkStats> stats;
  std::vector<std::vector<std::pair<SimTime, double>>> timeline;
  std::vector<double> last_sample;
  SimTime accounted_until = 0;

  std::vector<double> bytes;  ///< of each flow, until it is active
  std::vector<FlowId> ids;
  std::vector<Completion> callbacks;
  std::vector<State> states;
  /// Paths of pending flows, back to back in one pool: a vector per flow would keep a million
  /// small heap blocks alive until activation, and fresh memory is slow to fault in.
  struct PendingPath {
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
  };
  std::vector<PendingPath> pending_path;  ///< per slot
  std::vector<LinkId> pending_links;
  std::size_t pending_links_dead = 0;     ///< entries of flows already activated
  std::vector<std::int32_t> free_slots;
  FlowId next_id = 0;
  std::map<SimTime, std::vector<std::int32_t>> pending;  ///< activation time -> slots, in add order

  std::vector<double> level_min_finish;  ///< per level of the last solve: earliest finish of its flows
  std::vector<SmallKeys> level_small;    ///< ... and smallest batching keys
  std::vector<std::int32_t> completed;   ///< scratch
  std::vector<LinkId> released_links;    ///< scratch: links of flows completed now (timeline only)
  std::vector<std::pair<LinkId, double>> load_before;  ///< scratch: busy links' loads before a solve
  SimTime wake_time = kNever;
  std::uint64_t generation = 0;
  std::int64_t recomputations = 0;
};

FlowNetwork::FlowNetwork(EventQueue& queue, std::vector<LinkCapacity> links, FlowNetworkOptions options)
    : impl_(std::make_unique<Impl>(queue, std::move(links), options)) {}

FlowNetwork::~FlowNetwork() = default;

FlowId FlowNetwork::add_flow(FlowRequest request, Completion on_complete) {
  Impl& n = *impl_;
  if (!(request.bytes > 0) || !std::isfinite(request.bytes)) {
    throw InternalError("flow network: flow of " + std::to_string(request.bytes) + " bytes (must be finite and > 0)");
  }
  if (request.latency < 0) throw InternalError("flow network: negative latency " + std::to_string(request.latency));
  if (request.start < n.queue.now()) {
    throw InternalError("flow network: flow starts at " + std::to_string(request.start) + " ps, before now (" +
                        std::to_string(n.queue.now()) + " ps)");
  }
  if (request.start > kNever - 1 - request.latency) throw InternalError("flow network: start + latency overflows SimTime");
  const auto link_count = static_cast<LinkId>(n.stats.size());
  const auto& path = request.path;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] < 0 || path[i] >= link_count) {
      throw InternalError("flow network: link id " + std::to_string(path[i]) + " out of range [0, " +
                          std::to_string(link_count) + ")");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (path[j] == path[i]) throw InternalError("flow network: path crosses link " + std::to_string(path[i]) + " twice");
    }
  }

  const std::int32_t s = n.allocate_slot();
  const FlowId id = n.next_id++;
  n.ids[s] = id;
  n.callbacks[s] = std::move(on_complete);
  n.states[s] = State::kPending;
  n.bytes[s] = request.bytes;
  n.store_pending_path(s, path);
  const SimTime at = request.start + request.latency;
  n.pending[at].push_back(s);
  if (at < n.wake_time) n.schedule_wakeup(at);
  return id;
}

const std::vector<LinkStats>& FlowNetwork::link_stats() const {
  // Bring the books up to the queue's clock: loads are constant since the network's last event.
  impl_->account(impl_->queue.now());
  return impl_->stats;
}

const std::vector<std::pair<SimTime, double>>& FlowNetwork::utilisation_timeline(LinkId link) const {
  static const std::vector<std::pair<SimTime, double>> kEmpty;
  if (link < 0 || static_cast<std::size_t>(link) >= impl_->stats.size()) {
    throw InternalError("flow network: link id " + std::to_string(link) + " out of range");
  }
  if (impl_->timeline.empty()) return kEmpty;
  return impl_->timeline[link];
}

std::int64_t FlowNetwork::rate_recomputations() const { return impl_->recomputations; }

std::int64_t FlowNetwork::partial_rate_recomputations() const { return impl_->solver.partial_solves(); }

std::int64_t FlowNetwork::rates_computed() const { return impl_->solver.flows_frozen(); }

std::int64_t FlowNetwork::active_flows() const { return impl_->solver.flow_count(); }

}  // namespace moesim::engine
