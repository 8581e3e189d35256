#include "moe/dispatch_traffic.hpp"

#include <algorithm>

namespace moesim::moe {

double miss_probability(std::int64_t n, std::int64_t a, std::int64_t k) {
  if (k <= 0 || a <= 0) return 1.0;
  if (n - a < k) return 0.0;
  double p = 1.0;
  for (std::int64_t i = 0; i < k; ++i) p *= static_cast<double>(n - a - i) / static_cast<double>(n - i);
  return p;
}

DispatchRows dispatch_rows(const DispatchShape& s) {
  DispatchRows r;
  const std::int64_t ep = std::max<std::int64_t>(s.ep, 1);
  if (ep <= 1 || s.experts <= 0 || s.topk <= 0) return r;
  const std::int64_t per_domain = std::clamp<std::int64_t>(s.ep_per_domain, 1, ep);
  const double pd = static_cast<double>(per_domain);
  const double k = static_cast<double>(s.topk);
  if (s.dispatcher != Dispatcher::kDeepep && s.dispatcher != Dispatcher::kHybridep) {
    // One row per (token, selected expert); each expert sits on a uniformly likely rank. A node
    // limit moves rows between remote domains but leaves the share on this domain at k/D.
    r.nvlink = k * (pd - 1.0) / static_cast<double>(ep);
    r.network = k * static_cast<double>(ep - per_domain) / static_cast<double>(ep);
    return r;
  }
  const DispatchReach reach = dispatch_reach(s);
  // Network: one row per remote domain the token reaches. NVLink: one row per peer rank of this
  // domain it reaches, plus the forwarding of other ranks' tokens that landed here, which by
  // symmetry equals this rank's tokens forwarded elsewhere: (D − 1)·(pd − 1)·p_rank.
  r.network = static_cast<double>(reach.domains - 1) * reach.domain;
  r.nvlink = static_cast<double>(reach.domains) * (pd - 1.0) * reach.rank;
  return r;
}

DispatchReach dispatch_reach(const DispatchShape& s) {
  DispatchReach out;
  const std::int64_t ep = std::max<std::int64_t>(s.ep, 1);
  const std::int64_t per_domain = std::clamp<std::int64_t>(s.ep_per_domain, 1, ep);
  out.domains = (ep + per_domain - 1) / per_domain;
  const std::int64_t per_rank_experts = s.experts / ep;
  const std::int64_t per_domain_experts = per_rank_experts * per_domain;
  // Device-limited routing: the token picks M domains first (uniformly, balanced), then its k
  // experts among theirs (DeepSeek-V3 report §2.1.2).
  const std::int64_t m = (s.device_limited > 0 && s.device_limited < out.domains) ? s.device_limited : out.domains;
  const double chosen = static_cast<double>(m) / static_cast<double>(out.domains);
  const std::int64_t pool = per_domain_experts * m;
  out.domain = chosen * (1.0 - miss_probability(pool, per_domain_experts, s.topk));
  out.rank = chosen * (1.0 - miss_probability(pool, per_rank_experts, s.topk));
  return out;
}

double dispatch_element_bytes(Dispatcher d, Precision training, bool fp8_dispatch) {
  if (fp8_dispatch && deduplicates(d) && is_low_precision(training)) return 1.0 + 4.0 / 128.0;
  return 2.0;
}

}  // namespace moesim::moe
