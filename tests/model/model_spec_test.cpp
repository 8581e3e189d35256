// ModelSpec queries, the MoE layer rule, and validate()'s cross-field rules with their messages.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "core/error.hpp"
#include "model/model_layer_pattern.hpp"
#include "model/model_spec.hpp"

using namespace moesim;

namespace {

model::ModelSpec small_moe() {
  model::ModelSpec s;
  s.name = "small";
  s.num_layers = 4;
  s.hidden_size = 1024;
  s.num_attention_heads = 32;
  s.num_query_groups = 8;
  s.kv_channels = 32;
  s.ffn_hidden_size = 4096;
  s.vocab_size = 1000;
  s.num_moe_experts = 8;
  s.moe_router_topk = 2;
  s.moe_ffn_hidden_size = 512;
  s.moe_layer_pattern = {false, true, true, true};
  return s;
}

std::string error_of(const model::ModelSpec& s) {
  try {
    model::validate(s);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("num_moe_layers and layer_is_moe follow the pattern") {
  model::ModelSpec s = small_moe();
  CHECK(s.num_moe_layers() == 3);
  CHECK_FALSE(s.layer_is_moe(0));
  CHECK(s.layer_is_moe(3));
  CHECK_FALSE(s.layer_is_moe(4));
  s.num_moe_experts = 0;
  CHECK(s.num_moe_layers() == 0);
  CHECK_FALSE(s.layer_is_moe(1));
}

TEST_CASE("attention_span: window, every k-th layer full, capped by the sequence") {
  model::ModelSpec s = small_moe();
  CHECK(s.attention_span(0, 8192) == 8192);
  s.sliding_window = 4096;
  CHECK(s.attention_span(0, 8192) == 4096);
  CHECK(s.attention_span(3, 8192) == 4096);
  CHECK(s.attention_span(0, 1000) == 1000);
  s.sliding_window_pattern = 2;  // gpt-oss: windowed, full, windowed, full
  CHECK(s.attention_span(0, 8192) == 4096);
  CHECK(s.attention_span(1, 8192) == 8192);
  CHECK(s.attention_span(2, 8192) == 4096);
  CHECK(s.attention_span(3, 8192) == 8192);
}

TEST_CASE("MoE layer rules build and are recovered from patterns") {
  using model::MoeLayerRule;
  CHECK(model::moe_layer_pattern({0, 1, 0}, 3) == std::vector<bool>{true, true, true});
  CHECK(model::moe_layer_pattern({0, 2, 0}, 5) == std::vector<bool>{true, false, true, false, true});  // Megatron k = 2
  CHECK(model::moe_layer_pattern({0, 2, 1}, 4) == std::vector<bool>{false, true, false, true});        // Llama-4 step 2
  CHECK(model::moe_layer_pattern({3, 1, 0}, 5) == std::vector<bool>{false, false, false, true, true});  // DeepSeek
  CHECK(model::moe_layer_pattern({3, 2, 0}, 7) ==
        std::vector<bool>{false, false, false, false, true, false, true});

  for (const MoeLayerRule& r : {MoeLayerRule{0, 1, 0}, MoeLayerRule{3, 1, 0}, MoeLayerRule{1, 2, 1}, MoeLayerRule{4, 3, 1}}) {
    const auto pattern = model::moe_layer_pattern(r, 20);
    const auto inferred = model::infer_moe_layer_rule(pattern);
    REQUIRE(inferred.has_value());
    CHECK(model::moe_layer_pattern(*inferred, 20) == pattern);
    CHECK(model::moe_layer_pattern(*inferred, 40) == model::moe_layer_pattern(r, 40));
  }
  CHECK_FALSE(model::infer_moe_layer_rule({true, true, false, true}).has_value());
  CHECK_FALSE(model::infer_moe_layer_rule({false, false}).has_value());
}

TEST_CASE("a valid spec passes") { CHECK(error_of(small_moe()) == "no error"); }

TEST_CASE("validate refuses inconsistent specs with the path, value, rule and allowed values") {
  struct Case {
    const char* what;
    std::function<void(model::ModelSpec&)> edit;
    const char* message;
  };
  const Case cases[] = {
      {"zero layers", [](auto& s) { s.num_layers = 0; },
       "at /num_layers: value 0: num_layers must be at least 1; allowed: integers >= 1"},
      {"heads not divisible by groups", [](auto& s) { s.num_query_groups = 3; },
       "at /num_query_groups: value 3: num_attention_heads (32) must be divisible by num_query_groups; allowed: 1, 2, "
       "4, 8, 16, 32"},
      {"more groups than heads", [](auto& s) { s.num_query_groups = 64; },
       "at /num_query_groups: value 64: num_attention_heads (32) must be divisible by num_query_groups; allowed: 1, "
       "2, 4, 8, 16, 32"},
      {"top-k above the experts", [](auto& s) { s.moe_router_topk = 9; },
       "at /moe_router_topk: value 9: moe_router_topk must be from 1 to num_moe_experts (8); allowed: integers from 1 "
       "to 8"},
      {"top-k zero", [](auto& s) { s.moe_router_topk = 0; },
       "at /moe_router_topk: value 0: moe_router_topk must be from 1 to num_moe_experts (8); allowed: integers from 1 "
       "to 8"},
      {"pattern length", [](auto& s) { s.moe_layer_pattern = {true, true}; },
       "at /moe_layer_freq: value 2 entries: the MoE layer pattern must have one entry per layer (num_layers = 4); "
       "allowed: 4 entries"},
      {"no MoE layer", [](auto& s) { s.moe_layer_pattern = {false, false, false, false}; },
       "at /moe_layer_freq: num_moe_experts is 8 but no layer is an MoE layer; allowed: a pattern with at least one "
       "MoE layer, or num_moe_experts 0"},
      {"expert width", [](auto& s) { s.moe_ffn_hidden_size = 0; },
       "at /moe_ffn_hidden_size: value 0: an MoE model needs moe_ffn_hidden_size (or ffn_hidden_size) > 0; allowed: "
       "integers >= 1"},
      {"dense layer without ffn", [](auto& s) { s.ffn_hidden_size = 0; },
       "at /ffn_hidden_size: value 0: the model has dense layers: ffn_hidden_size must be > 0; allowed: integers >= 1"},
      {"dense model without ffn",
       [](auto& s) {
         s.num_moe_experts = 0;
         s.moe_layer_pattern.clear();
         s.ffn_hidden_size = 0;
       },
       "at /ffn_hidden_size: value 0: the model has dense layers: ffn_hidden_size must be > 0; allowed: integers >= 1"},
      {"MoE layers without experts", [](auto& s) { s.num_moe_experts = 0; },
       "at /moe_layer_freq: MoE layers need num_moe_experts > 0"},
      {"window pattern without window", [](auto& s) { s.sliding_window_pattern = 2; },
       "at /sliding_window_pattern: value 2: sliding_window_pattern needs a sliding_window; allowed: 0 without a "
       "sliding_window"},
      {"MLA with grouped KV heads", [](auto& s) { s.multi_latent_attention = model::MlaSpec{0, 512, 128, 64, 128}; },
       "at /num_query_groups: value 8: multi_latent_attention has one key/value head per query head: "
       "num_query_groups must equal num_attention_heads; allowed: 32"},
      {"MLA without kv latent",
       [](auto& s) {
         s.num_query_groups = 32;
         s.multi_latent_attention = model::MlaSpec{0, 0, 128, 64, 128};
       },
       "at /multi_latent_attention/kv_lora_rank: value 0: must be at least 1; allowed: integers >= 1"},
      {"negative mtp", [](auto& s) { s.mtp_num_layers = -1; },
       "at /mtp_num_layers: value -1: mtp_num_layers must not be negative; allowed: integers >= 0"},
  };
  for (const Case& c : cases) {
    model::ModelSpec s = small_moe();
    c.edit(s);
    INFO(std::string(c.what));
    CHECK(error_of(s) == c.message);
  }
}
