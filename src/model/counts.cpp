#include "model/counts.hpp"

namespace moesim::model {

namespace {

double as_double(std::int64_t v) { return static_cast<double>(v); }

double mlp_matrices(const ModelSpec& s) { return s.gated_linear_unit ? 3.0 : 2.0; }

/// Weights of one MLP (dense, one expert or the shared experts) of width `ffn`, biases included when
/// the model has them: fc1 (2·ffn outputs when gated) and fc2.
double mlp_params(const ModelSpec& s, std::int64_t ffn) {
  const double h = as_double(s.hidden_size), f = as_double(ffn);
  double p = mlp_matrices(s) * h * f;
  if (s.add_bias_linear) p += (mlp_matrices(s) - 1.0) * f + h;
  return p;
}

/// The attention block's shapes, shared by the parameter and the FLOP counts.
struct AttentionShape {
  double weights = 0;       ///< projection matrices only (what FLOPs multiply)
  double biases = 0;        ///< one per output feature of every projection
  double latent_norms = 0;  ///< MLA's RMSNorms on the compressed q and kv latents
  double qk_width = 0;      ///< n·d_qk: the inner dimension of QKᵀ summed over heads
  double v_width = 0;       ///< n·d_v: the inner dimension of PV summed over heads
};

AttentionShape attention_shape(const ModelSpec& s) {
  const double h = as_double(s.hidden_size), n = as_double(s.num_attention_heads);
  AttentionShape a;
  if (!s.multi_latent_attention) {
    const double q = n * as_double(s.kv_channels);
    const double kv = as_double(s.num_query_groups) * as_double(s.kv_channels);
    a.weights = h * q + 2.0 * h * kv + q * h;
    a.biases = q + 2.0 * kv + h;
    a.qk_width = q;
    a.v_width = q;
    return a;
  }
  // DeepSeek-V2/V3 shapes (Megatron theoretical_memory_usage.py, MLA branch): queries are either
  // projected directly or through a q_lora_rank latent; keys and values always come from the
  // kv_lora_rank latent, plus one shared rotary key of qk_pos_emb_head_dim.
  const MlaSpec& m = *s.multi_latent_attention;
  const double qk_head = as_double(m.qk_head_dim + m.qk_pos_emb_head_dim);
  const double q_lora = as_double(m.q_lora_rank), kv_lora = as_double(m.kv_lora_rank);
  const double rope = as_double(m.qk_pos_emb_head_dim), v = as_double(m.v_head_dim), qk = as_double(m.qk_head_dim);
  if (m.q_lora_rank > 0) {
    a.weights += h * q_lora + q_lora * n * qk_head;
    a.biases += q_lora + n * qk_head;
    a.latent_norms += q_lora;
  } else {
    a.weights += h * n * qk_head;
    a.biases += n * qk_head;
  }
  a.weights += h * (kv_lora + rope) + kv_lora * n * (qk + v);
  a.biases += (kv_lora + rope) + n * (qk + v);
  a.latent_norms += kv_lora;
  a.weights += n * v * h;
  a.biases += h;
  a.qk_width = n * qk_head;
  a.v_width = n * v;
  return a;
}

/// Keys each query attends to on average in `layer`, the quantity the attention-core FLOPs scale with.
/// Full causal attention under Megatron's convention counts s/2 (half the s×s mask). For a causal
/// sliding window w we count exactly what the mask keeps, w − w²/(2s) keys per query (query i sees
/// min(i+1, w) keys), which equals s/2 at w = s so the two cases join, and tends to w for w ≪ s —
/// halving the window as well would under-count windowed layers by up to 2×. `kFullS2` and
/// bidirectional encoders count the whole span.
double keys_per_query(const ModelSpec& s, std::int64_t layer, std::int64_t seq, FlopsConvention convention) {
  const double span = as_double(s.attention_span(layer, seq));
  if (!s.causal || convention == FlopsConvention::kFullS2) return span;
  return span - span * span / (2.0 * as_double(seq));
}

/// MLP weights one token multiplies in `layer`: the dense FFN, or its top-k routed experts plus the
/// shared experts (the router GEMM is left out, as Megatron does).
double active_mlp_weights(const ModelSpec& s, std::int64_t layer) {
  const double h = as_double(s.hidden_size);
  if (!s.layer_is_moe(layer)) return mlp_matrices(s) * h * as_double(s.ffn_hidden_size);
  return mlp_matrices(s) * h *
         (as_double(s.moe_ffn_hidden_size) * as_double(s.moe_router_topk) +
          as_double(s.moe_shared_expert_intermediate_size));
}

/// Forward + backward FLOPs of one transformer layer over `tokens` tokens in sequences of `seq`.
double layer_flops(const ModelSpec& s, std::int64_t layer, std::int64_t seq, double tokens, FlopsConvention convention) {
  const AttentionShape a = attention_shape(s);
  const double linear = 6.0 * tokens * (a.weights + active_mlp_weights(s, layer));
  // QKᵀ costs 2·n·d_qk and PV 2·n·d_v FLOPs per (query, key) pair forward; backward is twice that.
  const double core = 6.0 * tokens * (a.qk_width + a.v_width) * keys_per_query(s, layer, seq, convention);
  return linear + core;
}

}  // namespace

LayerParams layer_params(const ModelSpec& s, std::int64_t layer) {
  const double h = as_double(s.hidden_size);
  const AttentionShape a = attention_shape(s);
  LayerParams p;
  p.attention = a.weights + a.latent_norms + (s.add_bias_linear ? a.biases : 0.0);
  if (s.layer_is_moe(layer)) {
    p.routed_expert_one = mlp_params(s, s.moe_ffn_hidden_size);
    p.routed_experts = as_double(s.num_moe_experts) * p.routed_expert_one;
    if (s.moe_shared_expert_intermediate_size > 0) p.shared_experts = mlp_params(s, s.moe_shared_expert_intermediate_size);
    p.router = h * as_double(s.num_moe_experts);
  } else {
    p.dense_mlp = mlp_params(s, s.ffn_hidden_size);
  }
  p.norms = 2.0 * h;  // pre-attention and pre-MLP norm
  return p;
}

ParamCounts count_params(const ModelSpec& s) {
  const double h = as_double(s.hidden_size), v = as_double(s.vocab_size);
  ParamCounts c;
  double idle_experts = 0;  // routed-expert weights a token does not touch
  for (std::int64_t l = 0; l < s.num_layers; ++l) {
    const LayerParams p = layer_params(s, l);
    c.transformer_layers += p.total();
    c.expert_params += p.routed_experts;
    if (s.layer_is_moe(l)) idle_experts += p.routed_experts - as_double(s.moe_router_topk) * p.routed_expert_one;
  }
  c.transformer_layers += h;  // final norm, part of the decoder block in Megatron
  c.embedding = v * h;
  c.output_layer = s.share_embeddings_and_output_weights ? 0.0 : v * h;
  c.total = c.embedding + c.output_layer + c.transformer_layers;
  c.active = c.total - idle_experts;
  if (s.mtp_num_layers > 0) {
    // DeepSeek-V3 MTP module: norms of the hidden state and of the next token's embedding (enorm,
    // hnorm), the 2h→h projection eh_proj, one transformer layer of the last layer's type and its
    // output norm; embedding and output head are shared with the main model.
    const double one = 2.0 * h * h + 3.0 * h + layer_params(s, s.num_layers - 1).total();
    c.mtp = as_double(s.mtp_num_layers) * one;
  }
  return c;
}

std::string_view to_string(FlopsConvention c) { return name_of(kFlopsConventionNames, c, "megatron"); }

double model_flops_per_step(const ModelSpec& s, std::int64_t seq, std::int64_t global_batch, FlopsConvention convention) {
  const double tokens = as_double(global_batch) * as_double(seq);
  const double h = as_double(s.hidden_size);
  double flops = 0;
  for (std::int64_t l = 0; l < s.num_layers; ++l) flops += layer_flops(s, l, seq, tokens, convention);
  // The logit GEMM runs once for the main head and once per MTP depth.
  flops += 6.0 * tokens * h * as_double(s.vocab_size) * (1.0 + as_double(s.mtp_num_layers));
  if (s.mtp_num_layers > 0) {
    const double one = layer_flops(s, s.num_layers - 1, seq, tokens, convention) + 6.0 * tokens * 2.0 * h * h;
    flops += as_double(s.mtp_num_layers) * one;
  }
  return flops;
}

}  // namespace moesim::model
