// JSON writers of the result contract (../shared/spec/scenario.md "Result", schema moesim.result/1).
// Objects are nlohmann::json (keys sorted), numbers are written in their shortest round-trip form, so
// the same Result always gives the same bytes.
#include "report/result_json.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "model/counts.hpp"
#include "report/finite_number.hpp"
#include "report/scenario_json.hpp"

namespace moesim::report {
namespace {

using Json = nlohmann::json;

constexpr const char* kResultSchema = "moesim.result/1";

double finite(double v, std::string_view field) { return finite_number(v, "result", field); }

Json mla_to_json(const model::MlaSpec& m) {
  return Json{{"q_lora_rank", m.q_lora_rank},
              {"kv_lora_rank", m.kv_lora_rank},
              {"qk_head_dim", m.qk_head_dim},
              {"qk_pos_emb_head_dim", m.qk_pos_emb_head_dim},
              {"v_head_dim", m.v_head_dim}};
}

Json params_to_json(const model::ParamCounts& p) {
  return Json{{"total", finite(p.total, "params.total")},
              {"active", finite(p.active, "params.active")},
              {"embedding", finite(p.embedding, "params.embedding")},
              {"output_layer", finite(p.output_layer, "params.output_layer")},
              {"transformer_layers", finite(p.transformer_layers, "params.transformer_layers")},
              {"mtp", finite(p.mtp, "params.mtp")},
              {"expert_params", finite(p.expert_params, "params.expert_params")}};
}

Json layout_to_json(const DerivedLayout& l) {
  return Json{{"dp", l.dp},
              {"edp", l.edp},
              {"num_microbatches", l.num_microbatches},
              {"num_nodes", l.num_nodes},
              {"layers_per_stage", l.layers_per_stage}};
}

Json memory_to_json(const MemoryResult& m) {
  Json stages = Json::array();
  for (const StageMemory& s : m.per_stage) {
    stages.push_back(Json{{"stage", s.stage},
                          {"weights_bytes", finite(s.weights_bytes, "memory.per_stage.weights_bytes")},
                          {"grads_bytes", finite(s.grads_bytes, "memory.per_stage.grads_bytes")},
                          {"optimizer_bytes", finite(s.optimizer_bytes, "memory.per_stage.optimizer_bytes")},
                          {"activations_bytes", finite(s.activations_bytes, "memory.per_stage.activations_bytes")},
                          {"buffers_bytes", finite(s.buffers_bytes, "memory.per_stage.buffers_bytes")},
                          {"peak_bytes", finite(s.peak_bytes, "memory.per_stage.peak_bytes")},
                          {"peak_op", s.peak_op}});
  }
  return Json{{"peak_bytes", finite(m.peak_bytes, "memory.peak_bytes")},
              {"capacity_bytes", finite(m.capacity_bytes, "memory.capacity_bytes")},
              {"fits", m.fits},
              {"per_stage", stages}};
}

Json simulation_to_json(const SimulationInfo& si) {
  Json ranks = Json::array();
  for (const RankActivity& a : si.ranks) {
    ranks.push_back(Json{{"rank", a.rank},
                         {"stage", a.stage},
                         {"ep_rank", a.ep_rank},
                         {"end_s", finite(a.end_s, "simulation.ranks.end_s")},
                         {"compute_s", finite(a.compute_s, "simulation.ranks.compute_s")},
                         {"comm_wait_s", finite(a.comm_wait_s, "simulation.ranks.comm_wait_s")},
                         {"idle_s", finite(a.idle_s, "simulation.ranks.idle_s")}});
  }
  Json links = Json::array();
  for (const LinkActivity& l : si.links) {
    links.push_back(Json{{"name", l.name},
                         {"bytes", finite(l.bytes, "simulation.links.bytes")},
                         {"busy_s", finite(l.busy_s, "simulation.links.busy_s")},
                         {"utilisation", finite(l.utilisation, "simulation.links.utilisation")},
                         {"peak_utilisation", finite(l.peak_utilisation, "simulation.links.peak_utilisation")}});
  }
  return Json{{"ranks_total", si.ranks_total},
              {"ranks_simulated", si.ranks_simulated},
              {"replication", si.replication},
              {"events", si.events},
              {"flows", si.flows},
              {"ranks", ranks},
              {"links", links}};
}

}  // namespace

nlohmann::json breakdown_to_json(const Breakdown& b) {
  Json j = Json::object();  // keys sorted: the table's order does not show
  for (const auto& [category, name] : kBreakdownCategoryNames) {
    j[std::string(name)] = finite(b.seconds(category), "breakdown." + std::string(name));
  }
  j["moe_imbalance"] = finite(b.moe_imbalance, "breakdown.moe_imbalance");
  j["critical_stage"] = b.critical_stage;
  return j;
}

nlohmann::json model_to_json(const model::ModelSpec& m) {
  Json j{{"name", m.name},
         {"source", m.source},
         {"num_layers", m.num_layers},
         {"hidden_size", m.hidden_size},
         {"num_attention_heads", m.num_attention_heads},
         {"num_query_groups", m.num_query_groups},
         {"kv_channels", m.kv_channels},
         {"ffn_hidden_size", m.ffn_hidden_size},
         {"gated_linear_unit", m.gated_linear_unit},
         {"vocab_size", m.vocab_size},
         {"causal", m.causal},
         {"add_bias_linear", m.add_bias_linear},
         {"hidden_dropout", m.hidden_dropout},
         {"num_moe_experts", m.num_moe_experts},
         {"mtp_num_layers", m.mtp_num_layers},
         {"share_embeddings_and_output_weights", m.share_embeddings_and_output_weights},
         {"sliding_window", m.sliding_window},
         {"sliding_window_pattern", m.sliding_window_pattern}};
  // The MoE fields have no meaning (and no valid value) in a dense model.
  if (m.is_moe()) {
    j["moe_router_topk"] = m.moe_router_topk;
    j["moe_ffn_hidden_size"] = m.moe_ffn_hidden_size;
    j["moe_shared_expert_intermediate_size"] = m.moe_shared_expert_intermediate_size;
    Json freq = Json::array();
    for (bool moe : m.moe_layer_pattern) freq.push_back(moe ? 1 : 0);
    j["moe_layer_freq"] = freq;
  }
  if (m.multi_latent_attention) j["multi_latent_attention"] = mla_to_json(*m.multi_latent_attention);
  return j;
}

nlohmann::json result_to_json(const Result& r) {
  Json j{{"schema", kResultSchema},
              {"scenario", scenario_to_json(r.scenario)},
              {"fidelity", to_string(r.fidelity)},
              {"step_time_s", finite(r.step_time_s, "step_time_s")},
              {"tokens_per_s", finite(r.tokens_per_s, "tokens_per_s")},
              {"tokens_per_s_per_gpu", finite(r.tokens_per_s_per_gpu, "tokens_per_s_per_gpu")},
              {"model_flops_per_step", finite(r.model_flops_per_step, "model_flops_per_step")},
              {"model_tflops_per_gpu", finite(r.model_tflops_per_gpu, "model_tflops_per_gpu")},
              {"mfu", finite(r.mfu, "mfu")},
              {"flops_convention", std::string(model::to_string(r.flops_convention))},
              {"params", params_to_json(r.params)},
              {"layout", layout_to_json(r.layout)},
              {"memory", memory_to_json(r.memory)},
              {"breakdown", breakdown_to_json(r.breakdown)},
              {"warnings", r.warnings},
              {"seed", r.seed},
              {"moesim_version", r.moesim_version}};
  if (r.simulation.present) j["simulation"] = simulation_to_json(r.simulation);
  if (r.whatif_baseline.present) {
    const WhatIfBaseline& b = r.whatif_baseline;
    Json speedups = Json::object();
    for (const OpClassInfo& c : kOpClasses) {
      const double f = r.scenario.whatif.speedup(c.op_class);
      if (f != 1.0) speedups[std::string(c.name)] = f;
    }
    j["whatif"] = Json{{"kernel_speedup", speedups},
                       {"baseline", Json{{"step_time_s", finite(b.step_time_s, "whatif.baseline.step_time_s")},
                                         {"tokens_per_s_per_gpu",
                                          finite(b.tokens_per_s_per_gpu, "whatif.baseline.tokens_per_s_per_gpu")},
                                         {"mfu", finite(b.mfu, "whatif.baseline.mfu")},
                                         {"breakdown", breakdown_to_json(b.breakdown)}}},
                       {"step_speedup", finite(b.step_time_s / r.step_time_s, "whatif.step_speedup")}};
  }
  if (r.routing.present) {
    // Loads rounded to 4 decimals: a heat map needs no more, and DeepSeek-V3's 58 × 256 table stays small.
    Json layers = Json::array();
    for (const auto& l : r.routing.layers) {
      Json loads = Json::array();
      for (double x : l.expert_load) loads.push_back(std::round(finite(x, "routing.layers.expert_load") * 1e4) / 1e4);
      layers.push_back(Json{{"layer", l.layer},
                            {"max_rank_imbalance", finite(l.max_rank_imbalance, "routing.layers.max_rank_imbalance")},
                            {"expert_load", loads}});
    }
    j["routing"] = Json{{"draws", r.routing.draws},
                        {"mean_imbalance", finite(r.routing.mean_imbalance, "routing.mean_imbalance")},
                        {"max_imbalance", finite(r.routing.max_imbalance, "routing.max_imbalance")},
                        {"drop_rate", finite(r.routing.drop_rate, "routing.drop_rate")},
                        {"layers", layers}};
    const DispatchMatrixResult& dm = r.routing.dispatch_matrix;
    if (dm.ranks > 0) {
      // Whole bytes: the matrices are expectations, and integers keep the JSON short and stable.
      const auto matrix = [&](const std::vector<double>& v, const char* field) {
        Json rows = Json::array();
        for (std::int64_t s = 0; s < dm.ranks; ++s) {
          Json row = Json::array();
          for (std::int64_t d = 0; d < dm.ranks; ++d) {
            row.push_back(std::llround(finite(v[static_cast<std::size_t>(s * dm.ranks + d)], field)));
          }
          rows.push_back(std::move(row));
        }
        return rows;
      };
      j["routing"]["dispatch_matrix"] =
          Json{{"layer", dm.layer},
               {"ranks", dm.ranks},
               {"dispatch_bytes", matrix(dm.dispatch_bytes, "routing.dispatch_matrix.dispatch_bytes")},
               {"combine_bytes", matrix(dm.combine_bytes, "routing.dispatch_matrix.combine_bytes")}};
    }
  }
  return j;
}

std::string result_to_json_text(const Result& r) {
  // Replacing invalid UTF-8 keeps a hand-built label from aborting the write of a whole result.
  return result_to_json(r).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace moesim::report
