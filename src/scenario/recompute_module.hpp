#pragma once
// The modules selective recompute can replay: Megatron-Core's --recompute-modules. Their spelling in
// scenario files, `moesim plan --recompute`, results, plans and messages is this one table; the
// table's order is Megatron's help text order, which every "allowed:" list shows.
#include <string_view>

#include "core/named_enum.hpp"

namespace moesim {

enum class RecomputeModule { kCoreAttn, kMoeAct, kLayernorm, kMlaUpProj, kMlp, kMoe, kSharedExperts };

inline constexpr auto kRecomputeModuleNames = std::to_array<EnumName<RecomputeModule>>(
    {{RecomputeModule::kCoreAttn, "core_attn"},
     {RecomputeModule::kMoeAct, "moe_act"},
     {RecomputeModule::kLayernorm, "layernorm"},
     {RecomputeModule::kMlaUpProj, "mla_up_proj"},
     {RecomputeModule::kMlp, "mlp"},
     {RecomputeModule::kMoe, "moe"},
     {RecomputeModule::kSharedExperts, "shared_experts"}});

[[nodiscard]] constexpr std::string_view to_string(RecomputeModule m) { return name_of(kRecomputeModuleNames, m); }

}  // namespace moesim
