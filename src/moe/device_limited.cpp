#include "moe/device_limited.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"

namespace moesim::moe {
namespace {

/// Weights w_g = E_C[1{g ∈ C} / P_C] over the Plackett–Luce choice of `limit` domains by mass, so that
/// an expert's popularity becomes p_e · w_{domain(e)}. Enumerates every ordered choice exactly:
/// domains!/(domains − limit)! sequences (1,680 for 8 domains and M = 4; 863,040 for 32 and M = 4).
class SequenceWeights {
 public:
  SequenceWeights(const std::vector<double>& mass, std::int64_t limit)
      : mass_(mass), limit_(limit), chosen_(mass.size(), false), w_(mass.size(), 0.0) {}

  std::vector<double> run() {
    visit(0, 1.0, 0.0);
    return w_;
  }

 private:
  void visit(std::int64_t depth, double probability, double chosen_mass) {
    if (probability <= 0.0) return;
    if (depth == limit_) {
      if (chosen_mass <= 0.0) return;
      for (std::size_t g = 0; g < mass_.size(); ++g) {
        if (chosen_[g]) w_[g] += probability / chosen_mass;
      }
      return;
    }
    const double left = 1.0 - chosen_mass;
    for (std::size_t g = 0; g < mass_.size(); ++g) {
      if (chosen_[g]) continue;
      chosen_[g] = true;
      // A domain with no mass left is picked only when every remaining one is empty; it then adds
      // nothing to the chosen mass and its experts' zero popularity keeps them at zero.
      const double pick = left > 1e-15 ? mass_[g] / left : 1.0 / static_cast<double>(mass_.size() - depth);
      visit(depth + 1, probability * pick, chosen_mass + mass_[g]);
      chosen_[g] = false;
    }
  }

  const std::vector<double>& mass_;
  std::int64_t limit_;
  std::vector<bool> chosen_;
  std::vector<double> w_;
};

/// Ordered choices the exact enumeration visits; beyond the budget moesim refuses rather than run
/// for minutes (a 64-domain EP group with M = 4 would need 15.2 million).
constexpr double kMaxSequences = 4.0e6;

}  // namespace

std::vector<double> domain_masses(const std::vector<double>& p, std::int64_t experts_per_domain) {
  const auto per_domain = static_cast<std::size_t>(std::max<std::int64_t>(experts_per_domain, 1));
  std::vector<double> mass((p.size() + per_domain - 1) / per_domain, 0.0);
  for (std::size_t e = 0; e < p.size(); ++e) mass[e / per_domain] += p[e];
  return mass;
}

std::vector<double> device_limited_popularity(const std::vector<double>& p, std::int64_t experts_per_domain,
                                              std::int64_t limit) {
  const std::vector<double> mass = domain_masses(p, experts_per_domain);
  const auto domains = static_cast<std::int64_t>(mass.size());
  if (limit <= 0 || limit >= domains) return p;
  // Equal masses (uniform routing) leave every weight at exactly 1: skip the rounding of computing it.
  const auto [lightest, heaviest] = std::minmax_element(mass.begin(), mass.end());
  if (*heaviest - *lightest <= 1e-12 * *heaviest) return p;
  double sequences = 1.0;
  for (std::int64_t i = 0; i < limit; ++i) sequences *= static_cast<double>(domains - i);
  if (sequences > kMaxSequences) {
    throw InputError("/moe/routing/device_limited_nodes", std::to_string(limit),
                     fmt::format("the expert loads under a limit of {} of the EP group's {} NVLink domains take {:.3g} "
                                 "ordered domain choices to compute, more than {:.3g}",
                                 limit, domains, sequences, kMaxSequences),
                     "a limit whose domains!/(domains - limit)! stays within 4e6 (M <= 4 for 32 domains), or "
                     "balanced routing");
  }
  const std::vector<double> w = SequenceWeights(mass, limit).run();
  const auto per_domain = static_cast<std::size_t>(std::max<std::int64_t>(experts_per_domain, 1));
  std::vector<double> out(p.size());
  for (std::size_t e = 0; e < p.size(); ++e) out[e] = p[e] * w[e / per_domain];
  // The weights make the answer sum to 1 exactly in real arithmetic; renormalise the rounding.
  const double total = std::accumulate(out.begin(), out.end(), 0.0);
  if (total > 0) {
    for (double& x : out) x /= total;
  }
  return out;
}

}  // namespace moesim::moe
