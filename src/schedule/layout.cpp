#include "schedule/layout.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"

namespace moesim::schedule {

namespace {
// Dimension indices of the two grids. Megatron's order "tp-cp-ep-dp-pp" leaves, after dropping the
// size-1 axis of each grid, dense = (tp, cp, dp, pp) and expert = (etp, ep, edp, pp).
constexpr int kDimTp = 0, kDimCp = 1, kDimDp = 2, kDimPp = 3;
constexpr int kDimEtp = 0, kDimEp = 1, kDimEdp = 2;

constexpr unsigned bit(int dim) { return 1U << static_cast<unsigned>(dim); }
constexpr bool has(unsigned mask, int dim) { return (mask & bit(dim)) != 0; }

std::int64_t positive(std::int64_t v) { return std::max<std::int64_t>(v, 1); }
}  // namespace

std::string_view to_string(GroupKind k) { return name_of(kGroupKindNames, k); }

namespace detail {

RankGrid::RankGrid(const std::array<std::int64_t, 4>& sizes) : size(sizes) {
  std::int64_t s = 1;
  for (int d = 0; d < 4; ++d) {
    stride[d] = s;
    s *= size[d];
  }
}

std::int64_t RankGrid::compose(const std::array<std::int64_t, 4>& digits) const {
  std::int64_t r = 0;
  for (int d = 0; d < 4; ++d) {
    if (digits[d] < 0 || digits[d] >= size[d]) {
      throw InternalError(fmt::format("layout: coordinate {} outside [0, {})", digits[d], size[d]));
    }
    r += digits[d] * stride[d];
  }
  return r;
}

std::int64_t RankGrid::group_size(unsigned mask) const {
  std::int64_t n = 1;
  for (int d = 0; d < 4; ++d)
    if (has(mask, d)) n *= size[d];
  return n;
}

std::vector<std::int64_t> RankGrid::members(std::int64_t rank, unsigned mask) const {
  // Clear the spanned digits to get the group's lowest rank, then count through the spanned
  // digits with the first dimension fastest: strides grow with the dimension, so the list ascends.
  std::int64_t base = rank;
  for (int d = 0; d < 4; ++d)
    if (has(mask, d)) base -= digit(rank, d) * stride[d];
  const std::int64_t n = group_size(mask);
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    std::int64_t rest = j, offset = 0;
    for (int d = 0; d < 4; ++d) {
      if (!has(mask, d)) continue;
      offset += rest % size[d] * stride[d];
      rest /= size[d];
    }
    out.push_back(base + offset);
  }
  return out;
}

std::int64_t RankGrid::group_base(std::int64_t index, unsigned mask) const {
  std::int64_t rest = index, base = 0;
  for (int d = 0; d < 4; ++d) {
    if (has(mask, d)) continue;
    base += rest % size[d] * stride[d];
    rest /= size[d];
  }
  return base;
}

}  // namespace detail

collective::GroupPlacement place_members(std::span<const std::int64_t> members, std::int64_t nvlink_domain_size) {
  const std::int64_t domain = positive(nvlink_domain_size);
  std::map<std::int64_t, std::int64_t> per_domain;
  for (const std::int64_t m : members) ++per_domain[m / domain];
  collective::GroupPlacement g;
  g.size = positive(static_cast<std::int64_t>(members.size()));
  // The busiest domain bounds the ring: its members share that domain's NICs.
  for (const auto& [d, n] : per_domain) g.per_domain = std::max(g.per_domain, n);
  return g;
}

Layout::Layout(const ParallelSpec& p, const hw::SystemSpec& system)
    : Layout(p, system.gpus, system.gpus_per_node, system.nvlink_domain_size) {}

Layout::Layout(const ParallelSpec& p, std::int64_t world, std::int64_t gpus_per_node, std::int64_t nvlink_domain_size)
    : world_(positive(world)),
      vpp_(positive(p.vpp)),
      gpus_per_node_(positive(gpus_per_node)),
      nvlink_domain_size_(positive(nvlink_domain_size)) {
  const std::int64_t tp = positive(p.tp), cp = positive(p.cp), pp = positive(p.pp);
  const std::int64_t etp = positive(p.etp), ep = positive(p.ep);
  if (world_ % (tp * cp * pp) != 0 || world_ % (etp * ep * pp) != 0) {
    throw InternalError(fmt::format("layout: world {} is not divisible by tp·cp·pp = {} and etp·ep·pp = {}", world_,
                                    tp * cp * pp, etp * ep * pp));
  }
  dense_ = detail::RankGrid({tp, cp, world_ / (tp * cp * pp), pp});
  expert_ = detail::RankGrid({etp, ep, world_ / (etp * ep * pp), pp});
}

Layout::Selection Layout::select(GroupKind k) const {
  switch (k) {
    case GroupKind::kTp: return {&dense_, bit(kDimTp)};
    case GroupKind::kCp: return {&dense_, bit(kDimCp)};
    case GroupKind::kDp: return {&dense_, bit(kDimDp)};
    case GroupKind::kPp: return {&dense_, bit(kDimPp)};
    case GroupKind::kTpCp: return {&dense_, bit(kDimTp) | bit(kDimCp)};
    case GroupKind::kDpCp: return {&dense_, bit(kDimCp) | bit(kDimDp)};
    case GroupKind::kEtp: return {&expert_, bit(kDimEtp)};
    case GroupKind::kEp: return {&expert_, bit(kDimEp)};
    case GroupKind::kEdp: return {&expert_, bit(kDimEdp)};
  }
  throw InternalError("layout: unknown group kind");
}

void Layout::check_rank(std::int64_t rank) const {
  if (rank < 0 || rank >= world_) throw InternalError(fmt::format("layout: rank {} outside [0, {})", rank, world_));
}

std::int64_t Layout::size(GroupKind k) const {
  const Selection s = select(k);
  return s.grid->group_size(s.mask);
}

RankCoordinates Layout::coordinates(std::int64_t rank) const {
  check_rank(rank);
  RankCoordinates c;
  c.tp = dense_.digit(rank, kDimTp);
  c.cp = dense_.digit(rank, kDimCp);
  c.dp = dense_.digit(rank, kDimDp);
  c.pp = dense_.digit(rank, kDimPp);
  c.etp = expert_.digit(rank, kDimEtp);
  c.ep = expert_.digit(rank, kDimEp);
  c.edp = expert_.digit(rank, kDimEdp);
  return c;
}

std::int64_t Layout::rank_of(const DenseCoordinates& c) const { return dense_.compose({c.tp, c.cp, c.dp, c.pp}); }

std::int64_t Layout::rank_of(const ExpertCoordinates& c) const { return expert_.compose({c.etp, c.ep, c.edp, c.pp}); }

std::vector<std::int64_t> Layout::group_of(GroupKind k, std::int64_t rank) const {
  check_rank(rank);
  const Selection s = select(k);
  return s.grid->members(rank, s.mask);
}

std::vector<std::vector<std::int64_t>> Layout::groups(GroupKind k) const {
  const Selection s = select(k);
  const std::int64_t n = num_groups(k);
  std::vector<std::vector<std::int64_t>> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t g = 0; g < n; ++g) out.push_back(s.grid->members(s.grid->group_base(g, s.mask), s.mask));
  return out;
}

std::int64_t Layout::virtual_stage(std::int64_t pp_rank, std::int64_t chunk) const {
  return chunk * dense_.size[kDimPp] + pp_rank;
}

collective::GroupPlacement Layout::placement(GroupKind k, std::int64_t rank) const {
  const std::vector<std::int64_t> members = group_of(k, rank);
  return place_members(members, nvlink_domain_size_);
}

std::string Layout::describe(std::int64_t rank) const {
  const RankCoordinates c = coordinates(rank);
  return fmt::format("rank {}: tp {} cp {} dp {} pp {} | etp {} ep {} edp {}", rank, c.tp, c.cp, c.dp, c.pp, c.etp,
                     c.ep, c.edp);
}

}  // namespace moesim::schedule
