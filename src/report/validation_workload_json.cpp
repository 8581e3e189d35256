#include "report/validation_workload_json.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace moesim::report {

std::string validation_workload_to_json_text(const ValidationWorkload& w) {
  using nlohmann::ordered_json;
  const ordered_json head{{"schema", "moesim.validation-workload/1"},
                          {"scenario", w.scenario},
                          {"gpu", w.gpu},
                          {"precision", w.precision},
                          {"recompute", w.recompute},
                          {"recompute_modules", w.recompute_modules},
                          {"attention", w.attention},
                          {"gpus", w.gpus},
                          {"tp", w.tp},
                          {"ep", w.ep},
                          {"dp", w.dp},
                          {"layers", w.layers},
                          {"microbatches", w.microbatches},
                          {"steps", w.steps},
                          {"warmup", w.warmup},
                          {"micro_batch_size", w.micro_batch_size},
                          {"seq", w.seq},
                          {"tokens_per_rank", w.tokens_per_rank},
                          {"hidden", w.hidden},
                          {"heads", w.heads},
                          {"kv_heads", w.kv_heads},
                          {"head_dim", w.head_dim},
                          {"q_lora_rank", w.q_lora_rank},
                          {"kv_lora_rank", w.kv_lora_rank},
                          {"qk_rope_head_dim", w.qk_rope_head_dim},
                          {"v_head_dim", w.v_head_dim},
                          {"gated", w.gated},
                          {"moe", w.moe},
                          {"ffn", w.ffn},
                          {"experts", w.experts},
                          {"topk", w.topk},
                          {"expert_ffn", w.expert_ffn},
                          {"shared_ffn", w.shared_ffn},
                          {"router_scoring", w.router_scoring},
                          {"seed", w.seed}};
  std::string out = "{\n";
  for (const auto& [key, value] : head.items()) {
    out += "  " + ordered_json(key).dump() + ": " + value.dump(-1, ' ', false, ordered_json::error_handler_t::replace) +
           ",\n";
  }
  // [layer][micro-batch][source][expert], one source row per line: dumped whole with an indent, a
  // 256-expert stack would take a line per number.
  out += "  \"routed_copies\": [";
  for (std::size_t l = 0; l < w.routed_copies.size(); ++l) {
    out += l == 0 ? "\n    [" : ",\n    [";
    const auto& layer = w.routed_copies[l];
    for (std::size_t mb = 0; mb < layer.size(); ++mb) {
      out += mb == 0 ? "\n      [" : ",\n      [";
      const auto& rows = layer[mb];
      for (std::size_t r = 0; r < rows.size(); ++r) {
        out += (r == 0 ? "\n        " : ",\n        ") + ordered_json(rows[r]).dump();
      }
      out += rows.empty() ? "]" : "\n      ]";
    }
    out += layer.empty() ? "]" : "\n    ]";
  }
  out += w.routed_copies.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

}  // namespace moesim::report
