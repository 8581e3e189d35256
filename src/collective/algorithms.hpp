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
#include "core/named_enum.hpp"

namespace moesim::collective {

enum class Algorithm { kRing, kTree, kNvls, kDirect, kHierarchical };
enum class Protocol { kLL, kLL128, kSimple };
inline constexpr auto kAlgorithmNames = std::to_array<EnumName<Algorithm>>(
    {{Algorithm::kRing, "ring"}, {Algorithm::kTree, "tree"}, {Algorithm::kNvls, "nvls"},
     {Algorithm::kDirect, "direct"}, {Algorithm::kHierarchical, "hierarchical"}});
/// NCCL's own spelling (NCCL_PROTO).
inline constexpr auto kProtocolNames = std::to_array<EnumName<Protocol>>(
    {{Protocol::kLL, "LL"}, {Protocol::kLL128, "LL128"}, {Protocol::kSimple, "Simple"}});
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

/// One algorithm under one protocol, in the terms both fidelities use: the latency before the first
/// byte, the extra bytes of the pipeline fill, and the share of each tier's bus bandwidth (line rate ×
/// measured efficiency) the protocol moves data at — flows scale their bytes by its inverse, so an
/// idle fabric reproduces the closed form. Ring and tree (all-reduce, all-gather, reduce-scatter).
struct ProtocolTerms {
  double latency_s = 0;
  double fill_bytes = 0;
  double nvlink_share = 1;   ///< of NVLink's bus bandwidth
  double network_share = 1;  ///< of a NIC's bus bandwidth
};
[[nodiscard]] ProtocolTerms protocol_terms(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                                           Algorithm algorithm, Protocol protocol);

/// Double binary tree over `nodes` NVLink domains (NCCL's inter-node tree): a heap-ordered binary
/// tree (parent of position p is (p − 1) / 2), and its mirror (node v at position nodes − 1 − v), so
/// that a node inner in one tree is a leaf in the other. Returns each node's parent, −1 at the root.
[[nodiscard]] std::vector<std::int64_t> binary_tree_parents(std::int64_t nodes, bool mirrored);

/// Largest number of tree edges (both trees together) at one node: each edge moves a tree's half of
/// the data once each way, so the busiest NIC carries max_degree / 2 × the channel's data per
/// direction (2 for 3+ nodes, 1 for 2 nodes).
[[nodiscard]] std::int64_t double_binary_tree_max_degree(std::int64_t nodes);

/// Hierarchical (rail-aligned) all-to-all in two phases, each a share of the nccl-tests size that
/// every GPU sends: NVLink first (blocks move to the member of the source domain on the destination's
/// rail, local blocks to their destination), then the network (each GPU sends what it gathered to
/// the GPU of its rail in every other domain). Both phases are balanced: every GPU sends the share.
struct AllToAllPhases {
  double nvlink_share = 0;   ///< (k − 1)/k for k members per domain
  double network_share = 0;  ///< (N − 1)/N for N domains
};
[[nodiscard]] AllToAllPhases hierarchical_alltoall_phases(const GroupPlacement& g);

/// The fastest applicable algorithm (or the one asked for), as NCCL's tuner would pick.
[[nodiscard]] CollectiveCost best_collective(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g,
                                             std::optional<Algorithm> only = std::nullopt);

}  // namespace moesim::collective
