#pragma once
// Closed-form (α–β) time of NCCL collectives, in the spirit of NCCL's own tuning model
// (src/graph/tuning.cc: per-step latency + bytes / bus bandwidth) and with nccl-tests' size and
// busbw conventions. The flow-level decomposition arrives with the network issue.
#include <cstdint>
#include <string_view>

#include "core/named_enum.hpp"
#include "core/units.hpp"
#include "hw/system_spec.hpp"

namespace moesim::collective {

enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv };
/// nccl-tests' spelling, as `moesim collective --op` takes it.
inline constexpr auto kOpNames = std::to_array<EnumName<Op>>(
    {{Op::kAllReduce, "all_reduce"}, {Op::kAllGather, "all_gather"}, {Op::kReduceScatter, "reduce_scatter"},
     {Op::kAllToAll, "alltoall"}, {Op::kSendRecv, "sendrecv"}});
[[nodiscard]] std::string_view to_string(Op op);

/// Where the members of a process group sit: `size` ranks, `per_domain` of them in each NVLink
/// domain they touch (size / per_domain domains). Megatron's rank order decides it: a group of
/// stride `stride` over consecutive GPUs has min(size, domain/stride) members per domain.
struct GroupPlacement {
  std::int64_t size = 1;
  std::int64_t per_domain = 1;
  [[nodiscard]] std::int64_t domains() const { return (size + per_domain - 1) / per_domain; }
  [[nodiscard]] bool crosses_domains() const { return domains() > 1; }
};

/// Placement of a group of `size` ranks whose members are `stride` GPUs apart.
[[nodiscard]] GroupPlacement place_group(const hw::SystemSpec& system, std::int64_t size, std::int64_t stride);

/// Bus bandwidth (nccl-tests busbw) a ring over this placement sustains for large messages: NVLink
/// inside one domain; across domains each domain's members drive their own NICs in parallel
/// (NCCL spreads channels over the rails), capped by NVLink.
[[nodiscard]] BytesPerSecond ring_bus_bandwidth(const hw::SystemSpec& system, const GroupPlacement& g);

/// nccl-tests bus-bandwidth factor: all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all
/// (n−1)/n; send/recv 1.
[[nodiscard]] double busbw_factor(Op op, std::int64_t n);

/// Time of one collective with nccl-tests size `bytes` (all-reduce: the buffer; all-gather: the
/// gathered output; reduce-scatter: the input; all-to-all: what one rank sends including to itself;
/// send/recv: the message).
[[nodiscard]] Seconds collective_time(const hw::SystemSpec& system, Op op, Bytes bytes, const GroupPlacement& g);

/// An all-to-all whose bytes are already split by path (e.g. a deduplicating MoE dispatcher):
/// `nvlink_bytes` to peers of this GPU's NVLink domain and `network_bytes` over its NICs run
/// concurrently; the slower sets the time, plus the latency of the farthest peer.
[[nodiscard]] Seconds alltoall_split_time(const hw::SystemSpec& system, Bytes nvlink_bytes, Bytes network_bytes,
                                          const GroupPlacement& g);

}  // namespace moesim::collective
