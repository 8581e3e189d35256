#pragma once
// DeepSeek's device-limited routing (DeepSeek-V2 report §2.1.2, DeepSeek-V3 §2.1.2: each token first
// picks M NVLink domains — nodes — and then its k experts among theirs) changes the expert loads
// as well as the traffic once the popularity is skewed: a domain holding hot experts is picked more
// often, and the picks it loses to the limit land on the chosen domains. moesim models the domain
// choice as the unlimited router's law applied to domains: M domains drawn one after another, each
// with probability proportional to the popularity mass left (Plackett–Luce over the domains' sums),
// then the k experts among the chosen domains in proportion to their popularity. DeepSeek's router
// ranks domains by the sum of each one's two highest affinities per token; this law keeps what
// matters here — a heavier domain is chosen more often, and balanced popularity stays balanced.
#include <cstdint>
#include <vector>

namespace moesim::moe {

/// The per-copy expert popularity under a limit of `limit` domains per token, experts placed
/// contiguously, `experts_per_domain` to a domain (expert e in domain e / experts_per_domain; the
/// last domain may hold fewer). `p` sums to 1; so does the answer, before any per-expert cap. Equal
/// domain masses, `limit` >= the domain count or `limit` <= 0 return `p` unchanged. Throws InputError
/// when the exact enumeration would exceed 4·10^6 ordered domain choices.
[[nodiscard]] std::vector<double> device_limited_popularity(const std::vector<double>& p,
                                                            std::int64_t experts_per_domain, std::int64_t limit);

/// Each domain's share of the popularity (the sums over its experts).
[[nodiscard]] std::vector<double> domain_masses(const std::vector<double>& p, std::int64_t experts_per_domain);

}  // namespace moesim::moe
