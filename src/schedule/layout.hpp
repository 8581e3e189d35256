#pragma once
// The parallel layout as Megatron-Core builds it (megatron/core/parallel_state.py,
// initialize_model_parallel and RankGenerator, default order "tp-cp-ep-dp-pp"): two rank grids over
// the same GPUs (MoE parallel folding).
//   dense grid  (attention, dense MLP):  rank = tp + TP·(cp + CP·(dp + DP·pp))   (ep = 1 there)
//   expert grid (MoE layers):            rank = etp + ETP·(ep + EP·(edp + EDP·pp)) (cp = 1 there)
// The first dimension varies fastest, so TP groups are consecutive ranks and PP is outermost; both
// grids share the PP groups (Megatron asserts it). Ranks are launched in node order, so GPU = rank.
// Nothing is materialised: coordinates and group members are computed on demand, so a layout of
// any size builds in constant time.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collective/closed_form.hpp"
#include "core/named_enum.hpp"
#include "hw/system_spec.hpp"
#include "scenario/scenario.hpp"

namespace moesim::schedule {

/// A kind of process group, named as in Megatron. kDpCp is the group dense gradients reduce over
/// (Megatron's DATA_PARALLEL_GROUP_WITH_CP); kTpCp the tensor-and-context group.
enum class GroupKind : std::uint8_t { kTp, kCp, kDp, kPp, kEp, kEtp, kEdp, kTpCp, kDpCp };
inline constexpr auto kGroupKindNames = std::to_array<EnumName<GroupKind>>(
    {{GroupKind::kTp, "tp"}, {GroupKind::kCp, "cp"}, {GroupKind::kDp, "dp"}, {GroupKind::kPp, "pp"},
     {GroupKind::kEp, "ep"}, {GroupKind::kEtp, "etp"}, {GroupKind::kEdp, "edp"}, {GroupKind::kTpCp, "tp-cp"},
     {GroupKind::kDpCp, "dp-cp"}});
[[nodiscard]] std::string_view to_string(GroupKind k);
inline constexpr std::array<GroupKind, kGroupKindNames.size()> kAllGroupKinds = values_of(kGroupKindNames);

/// A rank's place in the dense grid.
struct DenseCoordinates {
  std::int64_t tp = 0, cp = 0, dp = 0, pp = 0;
  bool operator==(const DenseCoordinates&) const = default;
};

/// A rank's place in the expert grid (pp is the same as in the dense grid).
struct ExpertCoordinates {
  std::int64_t etp = 0, ep = 0, edp = 0, pp = 0;
  bool operator==(const ExpertCoordinates&) const = default;
};

/// A rank's place in both grids.
struct RankCoordinates {
  std::int64_t tp = 0, cp = 0, dp = 0, pp = 0;
  std::int64_t etp = 0, ep = 0, edp = 0;
  [[nodiscard]] DenseCoordinates dense() const { return {tp, cp, dp, pp}; }
  [[nodiscard]] ExpertCoordinates expert() const { return {etp, ep, edp, pp}; }
  bool operator==(const RankCoordinates&) const = default;
};

/// Where a set of ranks sits: its size and the largest number of its members that share one NVLink
/// domain (GPU = rank; domain = rank / nvlink_domain_size). `members` need not be sorted.
[[nodiscard]] collective::GroupPlacement place_members(std::span<const std::int64_t> members,
                                                       std::int64_t nvlink_domain_size);

namespace detail {
/// A mixed-radix rank grid: dimension i has `size[i]` values and stride size[0]·…·size[i−1], the
/// first dimension fastest (Megatron's generate_masked_orthogonal_rank_groups). A group spans the
/// dimensions whose bit is set in `mask`.
struct RankGrid {
  std::array<std::int64_t, 4> size{1, 1, 1, 1};
  std::array<std::int64_t, 4> stride{1, 1, 1, 1};
  explicit RankGrid(const std::array<std::int64_t, 4>& sizes);
  RankGrid() = default;
  [[nodiscard]] std::int64_t digit(std::int64_t rank, int dim) const { return rank / stride[dim] % size[dim]; }
  [[nodiscard]] std::int64_t compose(const std::array<std::int64_t, 4>& digits) const;
  [[nodiscard]] std::int64_t group_size(unsigned mask) const;
  /// Members of the group through `rank`, ascending.
  [[nodiscard]] std::vector<std::int64_t> members(std::int64_t rank, unsigned mask) const;
  /// The lowest rank of group number `index` (groups numbered over the other dimensions, first fastest).
  [[nodiscard]] std::int64_t group_base(std::int64_t index, unsigned mask) const;
};
}  // namespace detail

class Layout {
 public:
  /// World = system.gpus. Throws InternalError when the sizes do not divide the world (scenarios
  /// are validated before a layout is built, so that is a caller's bug). dp and edp are derived from
  /// the world, as Megatron does; `p.dp` is not read.
  Layout(const ParallelSpec& p, const hw::SystemSpec& system);
  Layout(const ParallelSpec& p, std::int64_t world, std::int64_t gpus_per_node, std::int64_t nvlink_domain_size);

  [[nodiscard]] std::int64_t world() const { return world_; }
  [[nodiscard]] std::int64_t vpp() const { return vpp_; }
  /// Ranks in one group of this kind.
  [[nodiscard]] std::int64_t size(GroupKind k) const;
  /// Number of groups of this kind (world / size).
  [[nodiscard]] std::int64_t num_groups(GroupKind k) const { return world_ / size(k); }

  [[nodiscard]] RankCoordinates coordinates(std::int64_t rank) const;
  [[nodiscard]] std::int64_t rank_of(const DenseCoordinates& c) const;
  [[nodiscard]] std::int64_t rank_of(const ExpertCoordinates& c) const;

  /// Sorted members of the group of kind `k` that holds `rank`.
  [[nodiscard]] std::vector<std::int64_t> group_of(GroupKind k, std::int64_t rank) const;
  /// Every group of kind `k`, in the order Megatron's RankGenerator.get_ranks lists them (group
  /// index over the other dimensions, first dimension fastest), each sorted.
  [[nodiscard]] std::vector<std::vector<std::int64_t>> groups(GroupKind k) const;

  /// Megatron's interleaved assignment: model chunk `chunk` of pipeline rank `pp_rank` is virtual
  /// stage chunk·pp + pp_rank (parallel_state.py docstring: pp 4, vpp 2 → GPU 0 runs stages 0 and 4).
  [[nodiscard]] std::int64_t virtual_stage(std::int64_t pp_rank, std::int64_t chunk) const;

  [[nodiscard]] std::int64_t gpu_of(std::int64_t rank) const { return rank; }
  [[nodiscard]] std::int64_t node_of(std::int64_t rank) const { return rank / gpus_per_node_; }
  [[nodiscard]] std::int64_t nvlink_domain_of(std::int64_t rank) const { return rank / nvlink_domain_size_; }

  /// Placement of the group of kind `k` that holds `rank`, from its actual members.
  [[nodiscard]] collective::GroupPlacement placement(GroupKind k, std::int64_t rank) const;

  /// One line for traces and errors: "rank 17: tp 1 cp 0 dp 0 pp 1 | etp 0 ep 1 edp 0".
  [[nodiscard]] std::string describe(std::int64_t rank) const;

 private:
  /// Which grid a kind lives on and which of its dimensions the group spans.
  struct Selection {
    const detail::RankGrid* grid;
    unsigned mask;
  };
  [[nodiscard]] Selection select(GroupKind k) const;
  void check_rank(std::int64_t rank) const;

  detail::RankGrid dense_;   ///< tp, cp, dp, pp
  detail::RankGrid expert_;  ///< etp, ep, edp, pp
  std::int64_t world_ = 1, vpp_ = 1, gpus_per_node_ = 1, nvlink_domain_size_ = 1;
};

}  // namespace moesim::schedule
