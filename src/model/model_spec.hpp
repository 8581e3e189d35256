#pragma once
// The transformer / MoE description moesim reasons about. Field names follow Megatron-Core
// (TransformerConfig), which is also the spelling of a full model definition in a scenario
// (../shared/spec/scenario.md); HuggingFace aliases are mapped onto these by config/.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace moesim::model {

/// Multi-head latent attention (DeepSeek-V2/V3). q_lora_rank 0 means queries are not compressed
/// (DeepSeek-V2-Lite).
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_head_dim = 0;          ///< non-rotary part of each query/key head (HF qk_nope_head_dim)
  std::int64_t qk_pos_emb_head_dim = 0;  ///< rotary part (HF qk_rope_head_dim)
  std::int64_t v_head_dim = 0;
  friend bool operator==(const MlaSpec&, const MlaSpec&) = default;
};

struct ModelSpec {
  std::string name;    ///< preset name or user label ("mixtral-8x7b", "custom")
  std::string source;  ///< where the numbers come from (paper, HF repo); empty for user definitions

  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_query_groups = 0;  ///< KV heads; equal to num_attention_heads for MHA
  std::int64_t kv_channels = 0;       ///< head dim; hidden_size / num_attention_heads unless given
  std::int64_t ffn_hidden_size = 0;   ///< width of dense MLP layers (0 when every layer is MoE)
  bool gated_linear_unit = true;      ///< SwiGLU (3 matrices) when true, GELU (2 matrices) when false
  std::int64_t vocab_size = 0;
  bool causal = true;                 ///< false for encoders (ESM-2): attention over the full s×s
  bool add_bias_linear = false;       ///< biases on linear layers (GPT-3, ESM-2)
  /// Dropout probability after the attention projection and after the MLP (Megatron-Core's
  /// TransformerConfig.hidden_dropout, default 0.1). Above 0, each keeps a one-byte mask per element
  /// for the backward; at 0 PyTorch's dropout returns its input and keeps none (ATen Dropout.cpp),
  /// which is how Llama, Mixtral, Qwen, DeepSeek and Nemotron are trained.
  double hidden_dropout = 0.1;

  std::int64_t num_moe_experts = 0;   ///< 0 = dense model
  std::int64_t moe_router_topk = 0;
  std::int64_t moe_ffn_hidden_size = 0;
  std::int64_t moe_shared_expert_intermediate_size = 0;  ///< total width of the shared experts (0 = none)
  /// One entry per layer: true = MoE layer. Empty for dense models. Built from moe_layer_freq /
  /// first_k_dense / HF mlp_only_layers etc. by the loader.
  std::vector<bool> moe_layer_pattern;

  std::int64_t mtp_num_layers = 0;    ///< multi-token-prediction depth (DeepSeek-V3: 1)
  std::optional<MlaSpec> multi_latent_attention;
  bool share_embeddings_and_output_weights = false;
  std::int64_t sliding_window = 0;          ///< tokens; 0 = full attention in every layer
  std::int64_t sliding_window_pattern = 0;  ///< k: every k-th layer keeps full attention (0 = all windowed)

  [[nodiscard]] bool is_moe() const { return num_moe_experts > 0; }
  [[nodiscard]] bool layer_is_moe(std::int64_t layer) const {
    return is_moe() && layer >= 0 && layer < static_cast<std::int64_t>(moe_layer_pattern.size()) &&
           moe_layer_pattern[static_cast<std::size_t>(layer)];
  }
  [[nodiscard]] std::int64_t num_moe_layers() const;
  /// Attention span of layer `layer` for a sequence of `seq` tokens: the sliding window where the
  /// layer uses one, else `seq`.
  [[nodiscard]] std::int64_t attention_span(std::int64_t layer, std::int64_t seq) const;

  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

/// Semantic checks of a complete spec (cross-field rules: heads divisible by query groups, top-k ≤
/// experts, pattern length = num_layers, ...). Throws InputError with a path relative to the model
/// object (`/num_query_groups`); the caller prefixes it.
void validate(const ModelSpec& spec);

}  // namespace moesim::model
