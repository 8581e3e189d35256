#pragma once
// Which layers each pipeline rank runs: pp·vpp model chunks, Megatron's interleaved assignment
// (chunk c on rank c mod pp), layers spread as evenly as the counts allow.
#include <cstdint>
#include <vector>

#include "scenario/scenario.hpp"

namespace moesim::schedule {

struct StageLayers {
  std::vector<std::int64_t> layers;  ///< transformer layer indices on this pipeline rank (all chunks)
  /// The same layers split by virtual chunk: chunks[c] is model chunk c·pp + rank (vpp entries).
  std::vector<std::vector<std::int64_t>> chunks;
  bool has_embedding = false;
  bool has_output_head = false;       ///< LM head + loss (+ MTP modules)
};

/// One entry per pipeline rank. Uneven splits put the extra layers on the middle chunks first, as
/// the first and last chunks also carry the embedding and the loss.
[[nodiscard]] std::vector<StageLayers> plan_stages(const Scenario& s);

}  // namespace moesim::schedule
