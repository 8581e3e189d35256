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
  /// completions are batched. The rule (docs/engine.md): when the earliest projected finish t is
  /// due, every flow projected to finish by t + tolerance·(t - its activation) leaves the network
  /// at t. Each is still reported at its own projected finish (rounded up, never early); batching
  /// only moves when the others get its bandwidth, and they get it from the batch's rate-weighted
  /// mean finish. Error: no flow leaves more than tolerance × its elapsed time early; the knock-on
  /// on other flows is not bounded in general and is measured in docs/engine.md (per-flow errors
  /// up to about 2× the tolerance of the flow's duration, a collective's end within it).
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

  /// Adds a flow; `on_complete` runs (as an event) when its last byte has arrived. A flow with an
  /// empty path has an infinite rate: it completes exactly at start + latency.
  FlowId add_flow(FlowRequest request, Completion on_complete = {});

  /// Booked up to the queue's clock. Busy time ends when a flow leaves the network, which batching
  /// can put up to the tolerance before its reported completion.
  [[nodiscard]] const std::vector<LinkStats>& link_stats() const;
  /// (time, utilisation) samples of one link; empty unless record_utilisation_timeline.
  [[nodiscard]] const std::vector<std::pair<SimTime, double>>& utilisation_timeline(LinkId link) const;
  [[nodiscard]] std::int64_t rate_recomputations() const;
  /// Recomputations that restarted part-way (incremental_rates), a subset of rate_recomputations().
  [[nodiscard]] std::int64_t partial_rate_recomputations() const;
  /// Flow rates set over all recomputations (the solver's work is proportional to it).
  [[nodiscard]] std::int64_t rates_computed() const;
  /// Flows sharing links now (started, not yet left the network; empty-path flows never count).
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
