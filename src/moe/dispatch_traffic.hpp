#pragma once
// Token rows one EP rank sends per routed token when it dispatches (the combine mirrors it), by
// dispatcher, under balanced routing, split into NVLink and network rows (docs/routing.md
// "Dispatchers"). Megatron's alltoall and allgather-free paths send one row per (token, expert);
// DeepEP and HybridEP send a token once per destination NVLink domain over the network and
// forward it inside the domain over NVLink, once per destination rank. DeepSeek's device-limited
// routing (at most M domains per token) caps the network rows of the deduplicating dispatchers.
#include <cstdint>

#include "scenario/scenario.hpp"

namespace moesim::moe {

struct DispatchRows {
  double nvlink = 0;   ///< rows per routed token this rank sends to peers of its NVLink domain
  double network = 0;  ///< rows per routed token this rank sends over its NICs
};

struct DispatchShape {
  std::int64_t experts = 0;           ///< E
  std::int64_t topk = 0;              ///< k
  std::int64_t ep = 1;                ///< EP group size
  std::int64_t ep_per_domain = 1;     ///< EP ranks per NVLink domain (EP group placement)
  std::int64_t device_limited = 0;    ///< M: NVLink domains a token may reach (0 = unlimited)
  Dispatcher dispatcher = Dispatcher::kAlltoall;
};

/// Expected rows per routed token (uniform expert choice: the balanced routing the estimator prices).
[[nodiscard]] DispatchRows dispatch_rows(const DispatchShape& shape);

/// For the deduplicating dispatchers under balanced routing: how many NVLink domains the EP group
/// spans and the chance that one token reaches a given remote domain / a given rank (DeepSeek's
/// device-limited routing included: the token picks M domains first, then its k experts among theirs).
struct DispatchReach {
  std::int64_t domains = 1;
  double domain = 0;  ///< P(token reaches a given domain)
  double rank = 0;    ///< P(token reaches a given rank)
};
[[nodiscard]] DispatchReach dispatch_reach(const DispatchShape& shape);

/// C(n − a, k) / C(n, k): the chance that none of k distinct picks among n items falls in a given
/// subset of a items.
[[nodiscard]] double miss_probability(std::int64_t n, std::int64_t a, std::int64_t k);

/// Bytes per dispatched element: FP8 (1 byte + one fp32 scale per 128 elements) where the scenario's
/// DeepEP / HybridEP dispatch quantises (moe.fp8_dispatch) under an FP8 or FP4 recipe; every combine
/// and every other dispatch moves 16-bit activations.
[[nodiscard]] double dispatch_element_bytes(Dispatcher d, Precision training, bool fp8_dispatch);

}  // namespace moesim::moe
