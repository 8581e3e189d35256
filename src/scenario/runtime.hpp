#pragma once
// The software stack a run used (the contract's `runtime` section, ../shared/spec/scenario.md
// Additions): which parts of the step Megatron-Core captures in CUDA graphs, the host CPU that
// launches the rest, and which kernel fusions are on. The same layout runs at very different speeds
// under different stacks (Megatron-Bridge's Qwen3-30B-A3B on GB200: 22.8k to 41k tokens/s/GPU
// across releases, docs/accuracy.md), so a scenario says which one it means.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/named_enum.hpp"
#include "hw/host_kind.hpp"

namespace moesim {

/// Megatron-Core's CUDA-graph scopes (megatron/core/transformer/enums.py CudaGraphScope, captured by
/// --cuda-graph-impl transformer_engine with --cuda-graph-scope), plus `layer`: whole transformer
/// layers, the per-layer graphs of --cuda-graph-impl local without a scope.
enum class CudaGraphScope : std::uint8_t {
  kLayer,          ///< every transformer layer as one graph (local implementation)
  kAttn,           ///< the attention block
  kMlp,            ///< dense MLP blocks (dense layers only)
  kMoe,            ///< whole MoE blocks (drop-and-pad MoE layers only: static shapes)
  kMoeRouter,      ///< the MoE router
  kMoePreprocess,  ///< the dispatcher's preprocessing after the router (requires moe_router)
  kMamba,          ///< Mamba mixers
  kFullIteration,  ///< the whole forward-backward step as one graph
};
inline constexpr auto kCudaGraphScopeNames = std::to_array<EnumName<CudaGraphScope>>(
    {{CudaGraphScope::kLayer, "layer"},
     {CudaGraphScope::kAttn, "attn"},
     {CudaGraphScope::kMlp, "mlp"},
     {CudaGraphScope::kMoe, "moe"},
     {CudaGraphScope::kMoeRouter, "moe_router"},
     {CudaGraphScope::kMoePreprocess, "moe_preprocess"},
     {CudaGraphScope::kMamba, "mamba"},
     {CudaGraphScope::kFullIteration, "full_iteration"}});

/// Kernel fusions Megatron-Core switches by flag; on, each replaces a chain of small kernels by one.
enum class Fusion : std::uint8_t {
  kMoePermute,              ///< --moe-permute-fusion: TE's fused token permute / unpermute
  kMoeRouter,               ///< --moe-router-fusion: fused top-k and score function
  kCrossEntropy,            ///< --cross-entropy-loss-fusion
  kBiasSwiglu,              ///< bias_activation_fusion (bias + SwiGLU / GeLU in one kernel)
  kRope,                    ///< apply_rope_fusion
  kGradientAccumulation,    ///< gradient_accumulation_fusion (wgrad GEMM accumulates into main_grad)
  kMaskedSoftmax,           ///< masked_softmax_fusion (unfused attention only)
};
inline constexpr auto kFusionNames = std::to_array<EnumName<Fusion>>(
    {{Fusion::kMoePermute, "moe_permute"},
     {Fusion::kMoeRouter, "moe_router"},
     {Fusion::kCrossEntropy, "cross_entropy"},
     {Fusion::kBiasSwiglu, "bias_swiglu"},
     {Fusion::kRope, "rope"},
     {Fusion::kGradientAccumulation, "gradient_accumulation"},
     {Fusion::kMaskedSoftmax, "masked_softmax"}});

/// Megatron-Core's defaults (megatron/training/arguments.py and transformer_config.py): bias + activation,
/// RoPE, gradient-accumulation and masked-softmax fusion on; cross-entropy, MoE permute and MoE router
/// fusion off.
inline constexpr std::array kMegatronDefaultFusions = {Fusion::kBiasSwiglu, Fusion::kRope,
                                                        Fusion::kGradientAccumulation, Fusion::kMaskedSoftmax};

/// The host that launches the kernels: a kind (its own figures), and optionally a speed relative to
/// that kind's reference (2 = launches twice as fast).
struct RuntimeHost {
  hw::HostKind kind = hw::HostKind::kX86;
  std::optional<double> relative_speed;  ///< unset: the kind's reference speed (runtime.host given as a name)
};

struct RuntimeSpec {
  std::vector<CudaGraphScope> cuda_graph;  ///< empty: eager (no CUDA graphs), Megatron-Core's default
  RuntimeHost host;                        ///< default: the system's host
  std::vector<Fusion> fusions{kMegatronDefaultFusions.begin(), kMegatronDefaultFusions.end()};

  [[nodiscard]] bool captures(CudaGraphScope scope) const;
  [[nodiscard]] bool has(Fusion fusion) const;
  /// The whole step is one graph: nothing is launched by the host per kernel, nothing synchronises.
  [[nodiscard]] bool full_iteration_graph() const { return captures(CudaGraphScope::kFullIteration); }
};

[[nodiscard]] std::string_view to_string(CudaGraphScope s);
[[nodiscard]] std::string_view to_string(Fusion f);

}  // namespace moesim
