#pragma once
// What-if questions on the software (../shared/spec/scenario.md Additions, `whatif`): "what if this
// kernel were F× faster?". Each op class names the ops of the op program (program/layer_cost) it
// scales, so a what-if says exactly which kernels it touches; the class table is the one place those
// names are declared (docs/whatif.md and the field reference are written from it, and a program test
// checks that every op named here exists).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/named_enum.hpp"

namespace moesim {

/// A class of ops a kernel speed-up applies to.
enum class OpClass : std::uint8_t {
  kAttention,
  kAttentionProj,
  kDenseMlp,
  kSharedExpert,
  kExpertMlp,
  kRouter,
  kPermute,
  kDispatch,
  kCombine,
  kLmHead,
  kOptimizer,
};

struct OpClassInfo {
  OpClass op_class;
  std::string_view name;
  std::string_view doc;
  /// The op program's op names it scales (forward, backward and recomputed alike).
  std::span<const std::string_view> ops;
};

namespace op_class_ops {
inline constexpr std::array<std::string_view, 1> kAttention{"core_attention"};
inline constexpr std::array<std::string_view, 7> kAttentionProj{"qkv_proj",     "q_proj",       "q_down_proj", "q_up_proj",
                                                               "kv_down_proj", "kv_up_proj",   "attn_out_proj"};
inline constexpr std::array<std::string_view, 3> kDenseMlp{"fc1", "activation", "fc2"};
inline constexpr std::array<std::string_view, 3> kSharedExpert{"shared_fc1", "shared_activation", "shared_fc2"};
inline constexpr std::array<std::string_view, 3> kExpertMlp{"expert_fc1", "expert_activation", "expert_fc2"};
inline constexpr std::array<std::string_view, 2> kRouter{"router", "router_topk"};
inline constexpr std::array<std::string_view, 3> kPermute{"moe_preprocess", "permute", "unpermute"};
inline constexpr std::array<std::string_view, 1> kDispatch{"dispatch"};
inline constexpr std::array<std::string_view, 1> kCombine{"combine"};
inline constexpr std::array<std::string_view, 2> kLmHead{"lm_head", "cross_entropy"};
inline constexpr std::array<std::string_view, 1> kOptimizer{"optimizer_step"};
}  // namespace op_class_ops

inline constexpr auto kOpClasses = std::to_array<OpClassInfo>({
    {OpClass::kAttention, "attention", "the attention core (FlashAttention / cuDNN, or the unfused kernels)",
     op_class_ops::kAttention},
    {OpClass::kAttentionProj, "attention_proj", "the attention block's linear layers (QKV or MLA projections, output)",
     op_class_ops::kAttentionProj},
    {OpClass::kDenseMlp, "dense_mlp", "a dense layer's MLP: FC1, activation, FC2", op_class_ops::kDenseMlp},
    {OpClass::kSharedExpert, "shared_expert", "the MoE block's shared experts: FC1, activation, FC2",
     op_class_ops::kSharedExpert},
    {OpClass::kExpertMlp, "expert_mlp", "the routed experts' grouped GEMMs and activation (the fused expert MLP)",
     op_class_ops::kExpertMlp},
    {OpClass::kRouter, "router", "the router's logits GEMM and its score / top-k kernel", op_class_ops::kRouter},
    {OpClass::kPermute, "permute", "the dispatcher's token counting, permute and unpermute", op_class_ops::kPermute},
    {OpClass::kDispatch, "dispatch", "the EP dispatch (all-to-all, DeepEP / HybridEP or all-gather)",
     op_class_ops::kDispatch},
    {OpClass::kCombine, "combine", "the EP combine (all-to-all, DeepEP / HybridEP or reduce-scatter)",
     op_class_ops::kCombine},
    {OpClass::kLmHead, "lm_head", "the output layer's GEMM and the cross-entropy", op_class_ops::kLmHead},
    {OpClass::kOptimizer, "optimizer", "the optimizer step (Adam over the rank's shard)", op_class_ops::kOptimizer},
});
inline constexpr std::size_t kOpClassCount = kOpClasses.size();
static_assert(
    [] {
      for (std::size_t i = 0; i < kOpClassCount; ++i) {
        if (static_cast<std::size_t>(kOpClasses[i].op_class) != i) return false;
      }
      return true;
    }(),
    "kOpClasses is indexed by OpClass");

[[nodiscard]] constexpr std::string_view to_string(OpClass c) { return kOpClasses[static_cast<std::size_t>(c)].name; }

/// The class whose ops include `op_name`; nullptr for an op no class scales (norms, residuals, TP / CP
/// collectives, launch gaps, host waits).
[[nodiscard]] constexpr const OpClassInfo* op_class_of(std::string_view op_name) {
  for (const OpClassInfo& c : kOpClasses) {
    for (std::string_view op : c.ops) {
      if (op == op_name) return &c;
    }
  }
  return nullptr;
}

/// whatif.kernel_speedup: each class's factor (> 0; 1 = as predicted, 2 = twice as fast).
struct WhatIfSpec {
  std::array<double, kOpClassCount> kernel_speedup = [] {
    std::array<double, kOpClassCount> ones{};
    ones.fill(1.0);
    return ones;
  }();
  [[nodiscard]] double speedup(OpClass c) const { return kernel_speedup[static_cast<std::size_t>(c)]; }
  /// Whether any factor differs from 1 (a what-if that changes the prediction).
  [[nodiscard]] bool any() const {
    for (double f : kernel_speedup) {
      if (f != 1.0) return true;
    }
    return false;
  }
};

}  // namespace moesim
