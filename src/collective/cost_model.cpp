#include "collective/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace moesim::collective {
namespace {

static_assert(static_cast<int>(hw::ProfileCollectiveOp::kAllReduce) == static_cast<int>(Op::kAllReduce) &&
                  static_cast<int>(hw::ProfileCollectiveOp::kAllGather) == static_cast<int>(Op::kAllGather) &&
                  static_cast<int>(hw::ProfileCollectiveOp::kReduceScatter) == static_cast<int>(Op::kReduceScatter) &&
                  static_cast<int>(hw::ProfileCollectiveOp::kAllToAll) == static_cast<int>(Op::kAllToAll) &&
                  static_cast<int>(hw::ProfileCollectiveOp::kSendRecv) == static_cast<int>(Op::kSendRecv),
              "hw::ProfileCollectiveOp and collective::Op list the ops in the same order");

std::shared_ptr<const CollectiveProfileTables> build(const hw::Profile& profile) {
  // (op, ranks) → (bytes, busbw) points of the single-node rows.
  std::map<std::pair<int, std::int64_t>, std::vector<std::pair<double, double>>> points;
  for (const hw::ProfileCollective& c : profile.collectives) {
    if (c.ranks_per_node < c.ranks) continue;  // spans nodes: the network there is not the scenario's
    points[{static_cast<int>(c.op), c.ranks}].emplace_back(static_cast<double>(c.bytes), c.busbw_gbps * 1e9);
  }
  auto t = std::make_shared<CollectiveProfileTables>();
  for (auto& [key, pts] : points) {
    std::sort(pts.begin(), pts.end());
    BusbwCurve curve;
    curve.op = static_cast<Op>(key.first);
    curve.ranks = key.second;
    curve.min_bytes = pts.front().first;
    curve.max_bytes = pts.back().first;
    // Rows of equal size (several ranks_per_node) are merged by their mean log busbw.
    for (std::size_t i = 0; i < pts.size();) {
      double sum = 0;
      std::size_t j = i;
      for (; j < pts.size() && pts[j].first == pts[i].first; ++j) sum += std::log(pts[j].second);
      curve.log_bytes.push_back(std::log(pts[i].first));
      curve.log_busbw.push_back(sum / static_cast<double>(j - i));
      i = j;
    }
    t->curves.push_back(std::move(curve));
  }
  return t;
}

}  // namespace

double BusbwCurve::busbw(double bytes, bool& outside) const {
  const double x = std::log(bytes);
  outside = x < log_bytes.front() - 1e-12 || x > log_bytes.back() + 1e-12;
  if (x <= log_bytes.front()) return std::exp(log_busbw.front());
  if (x >= log_bytes.back()) return std::exp(log_busbw.back());
  const auto hi = static_cast<std::size_t>(std::upper_bound(log_bytes.begin(), log_bytes.end(), x) - log_bytes.begin());
  const std::size_t lo = hi - 1;
  const double t = (x - log_bytes[lo]) / (log_bytes[hi] - log_bytes[lo]);
  return std::exp(log_busbw[lo] + t * (log_busbw[hi] - log_busbw[lo]));
}

const BusbwCurve* CollectiveProfileTables::find(Op op, std::int64_t ranks) const {
  for (const BusbwCurve& c : curves) {
    if (c.op == op && c.ranks == ranks) return &c;
  }
  return nullptr;
}

std::shared_ptr<const CollectiveProfileTables> collective_tables(const hw::Profile& profile) {
  return profile.derived.shared<CollectiveProfileTables>([&] { return build(profile); });
}

CollectiveQueryCounts& CollectiveProfileUsage::at(Op op, std::int64_t ranks) {
  for (std::size_t i = 0; i < size; ++i) {
    if (entries[i].op == op && entries[i].ranks == ranks) return entries[i];
  }
  if (size < kMaxEntries) {
    entries[size].op = op;
    entries[size].ranks = ranks;
    return entries[size++];
  }
  return entries[kMaxEntries - 1];
}

CollectiveCostModel::CollectiveCostModel(const hw::SystemSpec& system, std::shared_ptr<const hw::Profile> profile)
    : system_(&system), profile_(std::move(profile)) {
  if (profile_) tables_ = collective_tables(*profile_);
}

std::optional<Seconds> CollectiveCostModel::from_profile(Op op, double bytes, const GroupPlacement& g) const {
  if (!tables_) return std::nullopt;
  CollectiveQueryCounts& count = usage_.at(op, g.size);
  if (g.crosses_domains()) {
    ++count.multi_domain;
    return std::nullopt;
  }
  const BusbwCurve* curve = tables_->find(op, g.size);
  if (!curve) {
    ++count.no_rows;
    return std::nullopt;
  }
  bool outside = false;
  const double busbw = curve->busbw(bytes, outside);
  ++(outside ? count.outside : count.interpolated);
  // nccl-tests: time = size / algbw = size × bus factor / busbw.
  return Seconds(bytes * busbw_factor(op, g.size) / busbw);
}

Seconds CollectiveCostModel::time(Op op, Bytes bytes, const GroupPlacement& g) const {
  if (bytes.value() <= 0) return Seconds(0);
  if (g.size <= 1 && op != Op::kSendRecv) return Seconds(0);
  if (auto t = from_profile(op, bytes.value(), g)) return *t;
  return collective_time(*system_, op, bytes, g);
}

Seconds CollectiveCostModel::alltoall_split_time(Bytes nvlink_bytes, Bytes network_bytes, const GroupPlacement& g) const {
  if (nvlink_bytes.value() <= 0 && network_bytes.value() <= 0) return Seconds(0);
  if (tables_ && g.size > 1) {
    // nccl-tests' all-to-all size counts this rank's own block too: the peers' blocks are (n − 1)/n of it.
    const double n = static_cast<double>(g.size);
    const double size = (nvlink_bytes.value() + network_bytes.value()) * n / (n - 1.0);
    if (auto t = from_profile(Op::kAllToAll, size, g)) return *t;
  }
  return collective::alltoall_split_time(*system_, nvlink_bytes, network_bytes, g);
}

Seconds CollectiveCostModel::ep_kernel_time(std::string_view kernel, hw::EpKernelPhase phase, std::int64_t sms,
                                            Bytes nvlink_bytes, Bytes network_bytes, const GroupPlacement& g) const {
  const auto rate_of = [&](const auto& tables, std::int64_t ranks) -> std::optional<BytesPerSecond> {
    const auto table = tables.find(kernel);
    if (table == tables.end()) return std::nullopt;
    return table->second.rate(phase, ranks, sms);
  };
  // Across domains the kernel's published RDMA rate, where there is one, prices the network rows in
  // place of the NIC's closed form: what a rank sends to other domains, at the group's size.
  const std::optional<BytesPerSecond> rdma =
      g.crosses_domains() && network_bytes.value() > 0 ? rate_of(system_->gpu.ep_kernel_rdma, g.size) : std::nullopt;
  Seconds t = alltoall_split_time(nvlink_bytes, rdma ? Bytes(0) : network_bytes, g);
  // Inside a domain: the algorithm bandwidth counts everything a rank receives, its own share too.
  const double pd = static_cast<double>(g.per_domain);
  if (pd > 1 && nvlink_bytes.value() > 0) {
    if (const auto rate = rate_of(system_->gpu.ep_kernel_algbw, g.per_domain)) {
      const Bytes received(nvlink_bytes.value() * pd / (pd - 1.0));
      t = std::max(t, latency(Op::kAllToAll, g) + received / *rate);
    }
  }
  if (rdma) {
    // Published on one 400 Gb/s NIC per GPU: a cluster with more (or faster) NICs per GPU scales it.
    const double nics = system_->network_bandwidth_per_gpu().value() / hw::kEpRdmaTableNicBandwidth.value();
    t = std::max(t, latency(Op::kAllToAll, g) + network_bytes / (*rdma * nics));
  }
  return t;
}

Seconds CollectiveCostModel::latency(Op op, const GroupPlacement& g) const {
  return collective_time(*system_, op, Bytes(1), g);
}

}  // namespace moesim::collective
