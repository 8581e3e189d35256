#pragma once
// What the proxy runner (`moesim-validate-run`, calibrate/proxy/) executes: the validation proxy of a
// scenario (validate/proxy.hpp) reduced to shapes and token counts, so that the CUDA program needs no
// model, system or routing code and runs exactly the loads the prediction drew. The JSON form is
// `moesim.validation-workload/1` (report/validation_workload_json writes it, config/ reads it back;
// docs/validation.md lists the fields).
#include <cstdint>
#include <string>
#include <vector>

namespace moesim {

struct ValidationWorkload {
  std::string scenario;    ///< the proxy scenario's name
  std::string gpu;         ///< GPU preset the proxy is sized for (e.g. "h200-sxm"); the runner checks the device
  std::string precision;   ///< "bf16", "fp8", "mxfp8" or "nvfp4": the GEMMs run in it where the device supports it
  std::string recompute;   ///< "none", "selective" or "full" (the scenario's activation recompute)
  /// Under "selective": the modules recomputed (Megatron --recompute-modules: core_attn, moe_act,
  /// layernorm, mlp, moe, shared_experts); empty otherwise.
  std::vector<std::string> recompute_modules;
  std::string attention;   ///< "flash" (the core's scores are recomputed in the backward, not saved) or "unfused"
  std::int64_t gpus = 1, tp = 1, ep = 1, dp = 1;
  std::int64_t layers = 1, microbatches = 1, steps = 20, warmup = 5;
  std::int64_t micro_batch_size = 1, seq = 0;
  std::int64_t tokens_per_rank = 0;  ///< tokens one rank routes per micro-batch (micro_batch_size × seq / tp with SP)
  std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;
  /// Multi-latent attention (DeepSeek-V2/V3) when kv_lora_rank > 0: q through a q_lora_rank latent (or
  /// directly when 0), k and v from a kv_lora_rank latent plus one shared rotary key of
  /// qk_rope_head_dim; head_dim is then the query/key head dim (non-rotary + rotary), v_head_dim the
  /// value's, and kv_heads = heads. All 0 for multi-head / grouped-query attention.
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  bool gated = true;          ///< SwiGLU/GeGLU MLPs: fc1 produces 2 × ffn features
  bool moe = false;           ///< MoE layers (routed experts + optional shared expert); else dense MLPs
  std::int64_t ffn = 0;       ///< dense MLP intermediate size (dense layers)
  std::int64_t experts = 0, topk = 0, expert_ffn = 0, shared_ffn = 0;
  std::string router_scoring = "softmax";  ///< "softmax" or "sigmoid"
  std::uint64_t seed = 0;     ///< the scenario's seed the loads were drawn with
  /// Routed copies of one MoE layer and micro-batch: [layer][microbatch][source EP rank][expert]. Every
  /// source row sums to tokens_per_rank × topk and no entry exceeds tokens_per_rank (a token picks an
  /// expert once); expert e lives on EP rank e / (experts / ep). Empty for dense layers.
  std::vector<std::vector<std::vector<std::vector<std::int64_t>>>> routed_copies;
};

}  // namespace moesim
