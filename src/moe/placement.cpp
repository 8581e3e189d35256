#include "moe/placement.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"

namespace moesim::moe {

ExpertPlacement contiguous_placement(std::int64_t experts, std::int64_t ep) {
  if (ep < 1 || experts < ep || experts % ep != 0) {
    throw InternalError(fmt::format("expert placement: ep {} must divide the {} experts", ep, experts));
  }
  ExpertPlacement p;
  p.slots.resize(static_cast<std::size_t>(ep));
  p.replicas.assign(static_cast<std::size_t>(experts), 1);
  const std::int64_t per_rank = experts / ep;
  for (std::int64_t e = 0; e < experts; ++e) p.slots[static_cast<std::size_t>(e / per_rank)].push_back(e);
  return p;
}

std::vector<double> placed_rank_loads(const std::vector<double>& expert_loads, const ExpertPlacement& placement) {
  std::vector<double> loads(placement.slots.size(), 0.0);
  for (std::size_t j = 0; j < placement.slots.size(); ++j) {
    for (std::int64_t e : placement.slots[j]) {
      const auto i = static_cast<std::size_t>(e);
      loads[j] += expert_loads[i] / static_cast<double>(placement.replicas[i]);
    }
  }
  return loads;
}

namespace {
double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }
}  // namespace

ExpertPlacement balanced_placement(const std::vector<double>& expert_loads, std::int64_t ep,
                                   std::int64_t redundant_per_rank) {
  const auto experts = static_cast<std::int64_t>(expert_loads.size());
  ExpertPlacement fallback = contiguous_placement(experts, ep);
  if (redundant_per_rank < 0) throw InternalError("expert placement: negative redundant slots");
  const std::int64_t slots_per_rank = experts / ep + redundant_per_rank;
  // A rank holds an expert at most once, so an expert has at most ep replicas.
  const std::int64_t extra = std::min(ep * redundant_per_rank, experts * (ep - 1));

  ExpertPlacement p;
  p.replicas.assign(static_cast<std::size_t>(experts), 1);
  for (std::int64_t r = 0; r < extra; ++r) {
    std::size_t hottest = 0;
    double best = -1;
    for (std::size_t e = 0; e < expert_loads.size(); ++e) {
      if (p.replicas[e] >= ep) continue;
      const double per_replica = expert_loads[e] / static_cast<double>(p.replicas[e]);
      if (per_replica > best) {
        best = per_replica;
        hottest = e;
      }
    }
    ++p.replicas[hottest];
  }

  // Replicas, heaviest first (ties: lower expert id, so the result is deterministic).
  struct Replica {
    std::int64_t expert;
    double load;
  };
  std::vector<Replica> replicas;
  for (std::int64_t e = 0; e < experts; ++e) {
    const auto i = static_cast<std::size_t>(e);
    for (std::int64_t k = 0; k < p.replicas[i]; ++k) {
      replicas.push_back({e, expert_loads[i] / static_cast<double>(p.replicas[i])});
    }
  }
  std::stable_sort(replicas.begin(), replicas.end(), [](const Replica& a, const Replica& b) { return a.load > b.load; });

  p.slots.assign(static_cast<std::size_t>(ep), {});
  std::vector<double> rank_load(static_cast<std::size_t>(ep), 0.0);
  for (const Replica& rep : replicas) {
    std::size_t target = rank_load.size();
    for (std::size_t j = 0; j < rank_load.size(); ++j) {
      const auto& s = p.slots[j];
      if (static_cast<std::int64_t>(s.size()) >= slots_per_rank) continue;
      if (std::find(s.begin(), s.end(), rep.expert) != s.end()) continue;
      if (target == rank_load.size() || rank_load[j] < rank_load[target]) target = j;
    }
    if (target == rank_load.size()) return fallback;  // cannot happen with the slot count above; be safe
    p.slots[target].push_back(rep.expert);
    rank_load[target] += rep.load;
  }
  for (auto& s : p.slots) std::sort(s.begin(), s.end());
  if (max_of(rank_load) > max_of(placed_rank_loads(expert_loads, fallback))) return fallback;
  return p;
}

}  // namespace moesim::moe
