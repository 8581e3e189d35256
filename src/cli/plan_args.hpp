#pragma once
// Parsing of `moesim plan`'s list-valued options ("1,2,4", "256:2048", "all") into a search space.
#include <string>
#include <vector>

#include "cli/field_option.hpp"
#include "record/plan.hpp"

namespace moesim::cli {

/// "8" → {8}; "1,2,4" → {1, 2, 4}; "256:2048" → {256, 512, 1024, 2048} (doubling), each value in the
/// field's range; errors name the field's flag.
[[nodiscard]] std::vector<std::int64_t> parse_int_list(const ListField& field, const std::string& text, bool ranges);

/// "bf16,fp8" or "all" (every precision the GPU supports except fp16).
[[nodiscard]] std::vector<Precision> parse_precisions(const std::string& text, const hw::GpuSpec& gpu);

/// "none,selective,full" or "selective:moe_act+layernorm" entries.
[[nodiscard]] std::vector<RecomputeSpec> parse_recompute_list(const std::string& text);

/// "alltoall,deepep".
[[nodiscard]] std::vector<Dispatcher> parse_dispatchers(const std::string& text);

/// "i/N" with 0 <= i < N.
void parse_shard(const std::string& text, std::int64_t& shard, std::int64_t& shards);

}  // namespace moesim::cli
