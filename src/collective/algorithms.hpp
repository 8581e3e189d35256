#pragma once
// Collective algorithms and NCCL protocols, with the closed-form cost each one has: NCCL's own
// tuning model (src/graph/tuning.cc: base latency + per-step hardware latency, bandwidth per
// protocol) plus a pipeline-fill term that NCCL's model leaves out, checked against the published
// nccl-tests sweeps in tests/validation.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "collective/closed_form.hpp"

namespace moesim::collective {

enum class Algorithm { kRing, kTree, kNvls, kDirect, kHierarchical };
enum class Protocol { kLL, kLL128, kSimple };
[[nodiscard]] std::string_view to_string(Algorithm a);
[[nodiscard]] std::string_view to_string(Protocol p);
[[nodiscard]] std::optional<Algorithm> algorithm_from_string(std::string_view s);
[[nodiscard]] std::optional<Op> op_from_string(std::string_view s);

struct CollectiveCost {
  Seconds time;
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  double algbw_GBps = 0;  ///< nccl-tests: size / time
  double busbw_GBps = 0;  ///< algbw × the bus factor of the op
};

/// Algorithms that apply to `op` on this placement: ring (all-reduce, all-gather, reduce-scatter),
/// tree (all-reduce across domains), NVLS (all-reduce / all-gather / reduce-scatter inside one
/// NVLink-SHARP domain), direct and hierarchical (all-to-all), direct (send/recv).
[[nodiscard]] std::vector<Algorithm> applicable_algorithms(const hw::SystemSpec& system, Op op, const GroupPlacement& g);

/// Cost of one algorithm with the fastest protocol it supports for this size.
[[nodiscard]] CollectiveCost algorithm_cost(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                                            Algorithm algorithm);

/// The fastest applicable algorithm (or the one asked for), as NCCL's tuner would pick.
[[nodiscard]] CollectiveCost best_collective(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                                             std::optional<Algorithm> only = std::nullopt);

}  // namespace moesim::collective
