#pragma once
// Flows with max-min fair sharing of link capacity (progressive filling). Links are plain ids with a
// capacity; the engine knows nothing of GPUs, NICs or collectives (hw/ and collective/ map those
// onto link ids). Rates are recomputed only when the set of active flows changes.
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "engine/event_queue.hpp"

namespace moesim::engine {

using LinkId = std::int32_t;
using FlowId = std::int64_t;

struct LinkCapacity {
  double bytes_per_second = 0;  ///< > 0
};

struct FlowRequest {
  std::vector<LinkId> path;  ///< links the flow crosses, in order (may be empty: a local copy)
  double bytes = 0;          ///< > 0
  SimTime start = 0;         ///< when the flow becomes active (>= the queue's now())
  SimTime latency = 0;       ///< added once before the first byte moves (propagation + software)
};

/// Per-link accounting over a run.
struct LinkStats {
  double bytes = 0;          ///< bytes carried
  SimTime busy_time = 0;     ///< time with at least one active flow
  double peak_utilisation = 0;  ///< max over time of (sum of rates) / capacity
};

struct FlowNetworkOptions {
  /// Flows whose completion falls within this relative window of the earliest pending completion
  /// finish together (one rate recomputation for the batch). 0 = exact: only simultaneous
  /// completions are batched. Documented error bound: each flow finishes at most this fraction of
  /// the elapsed time early.
  double completion_batch_tolerance = 0.0;
  /// Record (time, utilisation) samples per link whenever rates change (for link-utilisation reports).
  bool record_utilisation_timeline = false;
  /// When flows only complete, restart progressive filling at the first bottleneck a completed flow
  /// crossed instead of from zero (same allocation up to rounding; false is for tests and timing).
  bool incremental_rates = true;
};

class FlowNetwork {
 public:
  using Completion = std::function<void(FlowId, SimTime)>;

  FlowNetwork(EventQueue& queue, std::vector<LinkCapacity> links, FlowNetworkOptions options = {});

  /// Adds a flow; `on_complete` runs (as an event) when its last byte has arrived.
  FlowId add_flow(FlowRequest request, Completion on_complete = {});

  [[nodiscard]] const std::vector<LinkStats>& link_stats() const;
  /// (time, utilisation) samples of one link; empty unless record_utilisation_timeline.
  [[nodiscard]] const std::vector<std::pair<SimTime, double>>& utilisation_timeline(LinkId link) const;
  [[nodiscard]] std::int64_t rate_recomputations() const;
  /// Recomputations that restarted part-way (incremental_rates), a subset of rate_recomputations().
  [[nodiscard]] std::int64_t partial_rate_recomputations() const;
  /// Flow rates set over all recomputations (the solver's work is proportional to it).
  [[nodiscard]] std::int64_t rates_computed() const;
  [[nodiscard]] std::int64_t active_flows() const;

  // Non-copyable: the queue holds callbacks into this object.
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;
  ~FlowNetwork();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::engine
