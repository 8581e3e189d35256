#include "model/model_spec.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/format.hpp"

namespace moesim::model {

std::int64_t ModelSpec::num_moe_layers() const {
  if (!is_moe()) return 0;
  return std::count(moe_layer_pattern.begin(), moe_layer_pattern.end(), true);
}

std::int64_t ModelSpec::attention_span(std::int64_t layer, std::int64_t seq) const {
  if (sliding_window <= 0) return seq;
  // HF/Gemma convention: with pattern k, layers k-1, 2k-1, ... keep full attention (gpt-oss, k = 2,
  // alternates windowed and full starting with a windowed layer 0).
  if (sliding_window_pattern > 0 && (layer + 1) % sliding_window_pattern == 0) return seq;
  return std::min(sliding_window, seq);
}

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

std::string divisors_text(std::int64_t n) {
  std::vector<std::string> out;
  for (std::int64_t d = 1; d <= n && out.size() < 64; ++d) {
    if (n % d == 0) out.push_back(str(d));
  }
  return join(out);
}

void require_positive(std::int64_t v, const char* key) {
  if (v < 1) throw InputError(std::string("/") + key, str(v), std::string(key) + " must be at least 1", "integers >= 1");
}

void require_non_negative(std::int64_t v, const char* key) {
  if (v < 0) throw InputError(std::string("/") + key, str(v), std::string(key) + " must not be negative", "integers >= 0");
}

bool has_dense_layer(const ModelSpec& s) {
  if (!s.is_moe()) return true;
  return std::find(s.moe_layer_pattern.begin(), s.moe_layer_pattern.end(), false) != s.moe_layer_pattern.end();
}

void validate_attention(const ModelSpec& s) {
  require_positive(s.num_query_groups, "num_query_groups");
  if (s.num_query_groups > s.num_attention_heads || s.num_attention_heads % s.num_query_groups != 0) {
    throw InputError("/num_query_groups", str(s.num_query_groups),
                     "num_attention_heads (" + str(s.num_attention_heads) + ") must be divisible by num_query_groups",
                     divisors_text(s.num_attention_heads));
  }
  require_positive(s.kv_channels, "kv_channels");
  if (!s.multi_latent_attention) return;
  const MlaSpec& m = *s.multi_latent_attention;
  // MLA reconstructs one key/value head per query head from the latent; grouped KV heads do not exist.
  if (s.num_query_groups != s.num_attention_heads) {
    throw InputError("/num_query_groups", str(s.num_query_groups),
                     "multi_latent_attention has one key/value head per query head: num_query_groups must equal "
                     "num_attention_heads",
                     str(s.num_attention_heads));
  }
  if (m.q_lora_rank < 0) {
    throw InputError("/multi_latent_attention/q_lora_rank", str(m.q_lora_rank), "must not be negative",
                     "0 (no query compression) or integers >= 1");
  }
  if (m.kv_lora_rank < 1) {
    throw InputError("/multi_latent_attention/kv_lora_rank", str(m.kv_lora_rank), "must be at least 1", "integers >= 1");
  }
  if (m.qk_head_dim < 1) {
    throw InputError("/multi_latent_attention/qk_head_dim", str(m.qk_head_dim), "must be at least 1", "integers >= 1");
  }
  if (m.qk_pos_emb_head_dim < 0) {
    throw InputError("/multi_latent_attention/qk_pos_emb_head_dim", str(m.qk_pos_emb_head_dim),
                     "must not be negative", "integers >= 0");
  }
  if (m.v_head_dim < 1) {
    throw InputError("/multi_latent_attention/v_head_dim", str(m.v_head_dim), "must be at least 1", "integers >= 1");
  }
}

void validate_moe(const ModelSpec& s) {
  require_non_negative(s.num_moe_experts, "num_moe_experts");
  if (!s.is_moe()) {
    if (std::find(s.moe_layer_pattern.begin(), s.moe_layer_pattern.end(), true) != s.moe_layer_pattern.end()) {
      throw InputError("/moe_layer_freq", "", "MoE layers need num_moe_experts > 0");
    }
    return;
  }
  if (s.moe_router_topk < 1 || s.moe_router_topk > s.num_moe_experts) {
    throw InputError("/moe_router_topk", str(s.moe_router_topk),
                     "moe_router_topk must be from 1 to num_moe_experts (" + str(s.num_moe_experts) + ")",
                     "integers from 1 to " + str(s.num_moe_experts));
  }
  if (s.moe_ffn_hidden_size < 1) {
    throw InputError("/moe_ffn_hidden_size", str(s.moe_ffn_hidden_size),
                     "an MoE model needs moe_ffn_hidden_size (or ffn_hidden_size) > 0", "integers >= 1");
  }
  require_non_negative(s.moe_shared_expert_intermediate_size, "moe_shared_expert_intermediate_size");
  if (static_cast<std::int64_t>(s.moe_layer_pattern.size()) != s.num_layers) {
    throw InputError("/moe_layer_freq", str(static_cast<std::int64_t>(s.moe_layer_pattern.size())) + " entries",
                     "the MoE layer pattern must have one entry per layer (num_layers = " + str(s.num_layers) + ")",
                     str(s.num_layers) + " entries");
  }
  if (s.num_moe_layers() == 0) {
    throw InputError("/moe_layer_freq", "", "num_moe_experts is " + str(s.num_moe_experts) + " but no layer is an MoE layer",
                     "a pattern with at least one MoE layer, or num_moe_experts 0");
  }
}

}  // namespace

void validate(const ModelSpec& s) {
  require_positive(s.num_layers, "num_layers");
  require_positive(s.hidden_size, "hidden_size");
  require_positive(s.num_attention_heads, "num_attention_heads");
  require_positive(s.vocab_size, "vocab_size");
  validate_attention(s);
  validate_moe(s);
  require_non_negative(s.ffn_hidden_size, "ffn_hidden_size");
  if (has_dense_layer(s) && s.ffn_hidden_size < 1) {
    throw InputError("/ffn_hidden_size", str(s.ffn_hidden_size), "the model has dense layers: ffn_hidden_size must be > 0",
                     "integers >= 1");
  }
  require_non_negative(s.mtp_num_layers, "mtp_num_layers");
  require_non_negative(s.sliding_window, "sliding_window");
  require_non_negative(s.sliding_window_pattern, "sliding_window_pattern");
  if (s.sliding_window_pattern > 0 && s.sliding_window == 0) {
    throw InputError("/sliding_window_pattern", str(s.sliding_window_pattern),
                     "sliding_window_pattern needs a sliding_window", "0 without a sliding_window");
  }
}

}  // namespace moesim::model
