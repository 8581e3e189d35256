#include "moe/dispatch_matrix.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace moesim::moe {

DispatchMatrix dispatch_matrix(const DispatchShape& shape, double tokens_per_rank, std::int64_t hidden,
                               double dispatch_element_bytes, std::span<const double> rank_load_share) {
  const std::int64_t ep = std::max<std::int64_t>(shape.ep, 1);
  const auto n = static_cast<std::size_t>(ep);
  if (!rank_load_share.empty() && rank_load_share.size() != n) {
    throw InternalError("dispatch_matrix: rank_load_share needs one entry per EP rank");
  }
  DispatchMatrix m;
  m.ranks = ep;
  m.dispatch_bytes.assign(n * n, 0.0);
  m.combine_bytes.assign(n * n, 0.0);
  // Relative load of a rank: its share over the balanced 1/ep.
  const auto relative = [&](std::int64_t r) {
    return rank_load_share.empty() ? 1.0 : rank_load_share[static_cast<std::size_t>(r)] * static_cast<double>(ep);
  };
  const std::int64_t per_domain = std::clamp<std::int64_t>(shape.ep_per_domain, 1, ep);
  const auto domain_of = [&](std::int64_t r) { return r / per_domain; };
  const double k = static_cast<double>(shape.topk);
  const double row = static_cast<double>(hidden);
  std::vector<double> rows(n * n, 0.0);  // token rows [source][destination]
  const auto at = [&](std::int64_t s, std::int64_t d) -> double& { return rows[static_cast<std::size_t>(s * ep + d)]; };

  if (shape.dispatcher == Dispatcher::kAllgather) {
    for (std::int64_t s = 0; s < ep; ++s) {
      for (std::int64_t d = 0; d < ep; ++d) at(s, d) = tokens_per_rank;
    }
  } else if (deduplicates(shape.dispatcher)) {
    // The balanced per-token chances of reaching one remote domain and one peer rank, as
    // dispatch_rows uses them.
    const DispatchReach reach = dispatch_reach(shape);
    const std::int64_t domains = reach.domains;
    const double p_domain = reach.domain, p_rank = reach.rank;
    std::vector<double> domain_relative(static_cast<std::size_t>(domains), 0.0);
    for (std::int64_t r = 0; r < ep; ++r) domain_relative[static_cast<std::size_t>(domain_of(r))] += relative(r);
    for (auto& x : domain_relative) x /= static_cast<double>(per_domain);
    for (std::int64_t s = 0; s < ep; ++s) {
      const std::int64_t local = s % per_domain;
      for (std::int64_t d = 0; d < ep; ++d) {
        if (domain_of(d) == domain_of(s)) {
          // Own tokens to a peer (or itself), plus the tokens of each remote domain this rank received
          // as their rail peer and forwards to d.
          const double own = tokens_per_rank * p_rank * relative(d);
          at(s, d) = d == s ? own : own * static_cast<double>(domains);
        } else if (d % per_domain == local) {
          at(s, d) = tokens_per_rank * p_domain * domain_relative[static_cast<std::size_t>(domain_of(d))];
        }
      }
    }
  } else {
    for (std::int64_t s = 0; s < ep; ++s) {
      for (std::int64_t d = 0; d < ep; ++d) at(s, d) = tokens_per_rank * k / static_cast<double>(ep) * relative(d);
    }
  }
  for (std::int64_t s = 0; s < ep; ++s) {
    for (std::int64_t d = 0; d < ep; ++d) {
      const double r = at(s, d);
      m.dispatch_bytes[static_cast<std::size_t>(s * ep + d)] = r * row * dispatch_element_bytes;
      // The combine sends each dispatched row back: destination to source, 16-bit.
      m.combine_bytes[static_cast<std::size_t>(d * ep + s)] = r * row * 2.0;
    }
  }
  return m;
}

}  // namespace moesim::moe
