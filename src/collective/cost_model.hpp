#pragma once
// The time of a collective as both fidelities ask for it: the closed form (closed_form.hpp), or, with a
// calibration profile (docs/profile.md), the bus bandwidth the profile measured for the same op over
// the same number of ranks inside one node, interpolated log-log in bytes. A group the profile has no
// rows for, or one that spans NVLink domains, keeps the closed form; every query is counted by what
// answered it (counters, not strings: the planner queries ~10^5 candidates).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "collective/closed_form.hpp"
#include "hw/ep_kernel_rates.hpp"
#include "hw/profile.hpp"
#include "hw/system_spec.hpp"

namespace moesim::collective {

/// One op's busbw curve over `ranks` ranks, from the profile's single-node rows (ranks_per_node >= ranks).
struct BusbwCurve {
  Op op = Op::kAllReduce;
  std::int64_t ranks = 0;
  std::vector<double> log_bytes;   ///< sorted, nccl-tests size
  std::vector<double> log_busbw;   ///< log(bytes/s)
  double min_bytes = 0, max_bytes = 0;
  /// busbw (bytes/s) at `bytes`, the end points' beyond the measured range (`outside` set).
  [[nodiscard]] double busbw(double bytes, bool& outside) const;
};

/// The curves of a profile, sorted by (op, ranks).
struct CollectiveProfileTables {
  std::vector<BusbwCurve> curves;
  [[nodiscard]] const BusbwCurve* find(Op op, std::int64_t ranks) const;
};
[[nodiscard]] std::shared_ptr<const CollectiveProfileTables> collective_tables(const hw::Profile& profile);

/// How the queries of one (op, group size) were answered.
struct CollectiveQueryCounts {
  Op op = Op::kAllReduce;
  std::int64_t ranks = 0;
  std::int64_t interpolated = 0;  ///< from the profile's curve, inside its measured sizes
  std::int64_t outside = 0;       ///< from the curve, clamped to its end
  std::int64_t no_rows = 0;       ///< the closed form: no single-node rows of this op and size
  std::int64_t multi_domain = 0;  ///< the closed form: the group spans NVLink domains
};

/// Counters by (op, group size), in a fixed array (groups beyond kMaxEntries share the last entry).
struct CollectiveProfileUsage {
  static constexpr std::size_t kMaxEntries = 32;
  std::array<CollectiveQueryCounts, kMaxEntries> entries{};
  std::size_t size = 0;
  CollectiveQueryCounts& at(Op op, std::int64_t ranks);
};

class CollectiveCostModel {
 public:
  /// `system` must outlive the model; `profile` nullptr: the closed form alone.
  CollectiveCostModel(const hw::SystemSpec& system, std::shared_ptr<const hw::Profile> profile);

  /// collective_time, or size × bus factor / the profile's busbw for a single-domain group it measured.
  [[nodiscard]] Seconds time(Op op, Bytes bytes, const GroupPlacement& g) const;
  /// alltoall_split_time; a group inside one NVLink domain (no network bytes) uses the profile's
  /// all_to_all curve at the nccl-tests size the NVLink bytes make (they exclude this rank's own share).
  [[nodiscard]] Seconds alltoall_split_time(Bytes nvlink_bytes, Bytes network_bytes, const GroupPlacement& g) const;
  /// One DeepEP / HybridEP dispatch or combine (`kernel`: the dispatcher's name in the GPU preset's
  /// `ep_kernel_algbw` tables) with `sms` SMs: alltoall_split_time, or where the preset publishes the
  /// kernel's algorithm bandwidth (hw/ep_kernel_rates.hpp) and the group has NVLink peers, the slower of
  /// that and the all-to-all latency plus the bytes a rank receives over NVLink (the peers' rows ×
  /// pd/(pd − 1): the table counts a rank's own share too) at the published rate for the domain's ranks;
  /// and where the group crosses domains and the preset publishes the kernel's RDMA rate
  /// (`ep_kernel_rdma`), the network bytes go at that rate for the group's size and `sms` (scaled by
  /// the cluster's NIC bandwidth per GPU over the table's 400 Gb/s) instead of the NIC's closed form.
  [[nodiscard]] Seconds ep_kernel_time(std::string_view kernel, hw::EpKernelPhase phase, std::int64_t sms,
                                       Bytes nvlink_bytes, Bytes network_bytes, const GroupPlacement& g) const;
  /// The size-independent part of the closed form (its latency terms); not a profile query.
  [[nodiscard]] Seconds latency(Op op, const GroupPlacement& g) const;

  [[nodiscard]] const hw::SystemSpec& system() const { return *system_; }
  [[nodiscard]] const hw::Profile* profile() const { return profile_.get(); }
  [[nodiscard]] const CollectiveProfileTables* profile_tables() const { return tables_.get(); }
  [[nodiscard]] const CollectiveProfileUsage& profile_usage() const { return usage_; }

 private:
  /// The profile's time for nccl-tests size `bytes`, counted; nullopt: use the closed form.
  [[nodiscard]] std::optional<Seconds> from_profile(Op op, double bytes, const GroupPlacement& g) const;

  const hw::SystemSpec* system_;
  std::shared_ptr<const hw::Profile> profile_;
  std::shared_ptr<const CollectiveProfileTables> tables_;
  mutable CollectiveProfileUsage usage_;
};

}  // namespace moesim::collective
