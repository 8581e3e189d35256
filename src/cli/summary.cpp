#include "cli/summary.hpp"

#include <cmath>

#include <fmt/format.h>

#include "model/counts.hpp"

namespace moesim::cli {
namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
std::string pct(double part, double whole) { return whole > 0 ? fmt::format("{:.1f}%", 100.0 * part / whole) : "-"; }
}  // namespace

std::string thousands(double v) {
  std::string digits = fmt::format("{:.0f}", std::round(v));
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0 && *it != '-') out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return out;
}

std::string format_model_summary(const model::ModelSpec& m) {
  const model::ParamCounts c = model::count_params(m);
  std::string out;
  out += fmt::format("model        {}\n", m.name);
  if (!m.source.empty()) out += fmt::format("source       {}\n", m.source);
  out += fmt::format("params       {:.2f} B total, {:.2f} B active per token", c.total / 1e9, c.active / 1e9);
  if (c.mtp > 0) out += fmt::format(" (+{:.2f} B in MTP modules)", c.mtp / 1e9);
  out += "\n";
  out += fmt::format("shape        {} layers, hidden {}, {} heads / {} KV groups, head dim {}, vocab {}{}\n", m.num_layers,
                     m.hidden_size, m.num_attention_heads, m.num_query_groups, m.kv_channels, m.vocab_size,
                     m.causal ? "" : ", bidirectional");
  if (m.multi_latent_attention) {
    const auto& a = *m.multi_latent_attention;
    out += fmt::format("attention    MLA: q_lora {}, kv_lora {}, qk {}+{} rope, v {}\n", a.q_lora_rank, a.kv_lora_rank,
                       a.qk_head_dim, a.qk_pos_emb_head_dim, a.v_head_dim);
  }
  out += fmt::format("mlp          {} (ffn {})\n", m.gated_linear_unit ? "SwiGLU" : "GELU", m.ffn_hidden_size);
  if (m.is_moe()) {
    out += fmt::format("moe          {} experts, top-{}, expert ffn {}, shared {}, {} of {} layers MoE\n", m.num_moe_experts,
                       m.moe_router_topk, m.moe_ffn_hidden_size, m.moe_shared_expert_intermediate_size,
                       m.num_moe_layers(), m.num_layers);
  }
  if (m.mtp_num_layers > 0) out += fmt::format("mtp          {} layer(s)\n", m.mtp_num_layers);
  const double per_token = model::model_flops_per_step(m, 4096, 1, model::FlopsConvention::kMegatron) / 4096.0;
  out += fmt::format("flops        {:.3g} per token at seq 4096 (fwd+bwd, Megatron convention)\n", per_token);
  return out;
}

std::string format_result_summary(const Result& r) {
  const Scenario& s = r.scenario;
  const auto& p = s.parallel;
  const auto& b = r.breakdown;
  std::string out;
  out += fmt::format("moesim {} · fidelity {} · {}\n", r.moesim_version, to_string(r.fidelity), s.name.empty() ? "(unnamed)" : s.name);
  out += fmt::format("model      {}: {:.2f} B params ({:.2f} B active), {} layers{}\n", s.model.name, r.params.total / 1e9,
                     r.params.active / 1e9, s.model.num_layers,
                     s.model.is_moe() ? fmt::format(", {} experts top-{}", s.model.num_moe_experts, s.model.moe_router_topk)
                                      : std::string());
  out += fmt::format("system     {} × {} GPUs ({}, {} nodes, NVLink domain {})\n", s.system.name, s.system.gpus,
                     s.system.gpu.name, r.layout.num_nodes, s.system.nvlink_domain_size);
  out += fmt::format("layout     TP{} PP{} VPP{} CP{} EP{} ETP{} DP{} (EDP{}){} · {} · mbs {} · gbs {} · seq {} · {} micro-batches\n",
                     p.tp, p.pp, p.vpp, p.cp, p.ep, p.etp, p.dp, r.layout.edp, p.sequence_parallel ? " SP" : "",
                     to_string(s.precision), s.training.micro_batch_size, s.training.global_batch_size,
                     s.training.seq_length, r.layout.num_microbatches);
  out += fmt::format("step       {:.4f} s · {} tokens/s · {} tokens/s/GPU · {:.1f} model TFLOP/s/GPU · MFU {:.1f}% ({})\n",
                     r.step_time_s, thousands(r.tokens_per_s), thousands(r.tokens_per_s_per_gpu), r.model_tflops_per_gpu,
                     100.0 * r.mfu, model::to_string(r.flops_convention));
  const WhatIfBaseline& baseline = r.whatif_baseline;
  if (baseline.present) {
    std::string speedups;
    for (const OpClassInfo& c : kOpClasses) {
      const double f = s.whatif.speedup(c.op_class);
      if (f != 1.0) speedups += fmt::format("{}{} {}×", speedups.empty() ? "" : ", ", c.name, f);
    }
    out += fmt::format("what-if    {}: step {:.4f} s against {:.4f} s with the kernels as predicted ({:.3f}× the throughput)\n",
                       speedups, r.step_time_s, baseline.step_time_s, baseline.step_time_s / r.step_time_s);
  }
  out += fmt::format("breakdown  (seconds on the critical rank: pipeline stage {}, the bottleneck){}\n", b.critical_stage,
                     baseline.present ? "; as predicted without the what-if" : "");
  const double t = r.step_time_s;
  for (const auto& [category, name] : kBreakdownCategoryNames) {
    const double v = b.seconds(category);
    if (category == BreakdownCategory::kExposedComm) continue;  // closes the table, as the sum it is
    if (category == BreakdownCategory::kHostIdle && !(v > 0)) continue;  // only when moe.host_sync_idle_s prices it
    out += fmt::format("  {:<13} {:>10.4f}  {:>6}", name, v, pct(v, t));
    out += baseline.present ? fmt::format("  {:>10.4f}\n", baseline.breakdown.seconds(category)) : std::string("\n");
  }
  out += fmt::format("  {:<13} {:>10.4f}  (sum of the *_comm rows)\n", to_string(BreakdownCategory::kExposedComm),
                     b.exposed_comm);
  if (s.model.is_moe()) out += fmt::format("  {:<13} {:>10.3f}  (max/mean tokens per EP rank)\n", "moe_imbalance", b.moe_imbalance);
  out += fmt::format("memory     peak {:.1f} GiB of {:.1f} GiB per GPU: {}\n", r.memory.peak_bytes / kGiB,
                     r.memory.capacity_bytes / kGiB, r.memory.fits ? "fits" : "DOES NOT FIT");
  out += fmt::format("  {:>5} {:>9} {:>9} {:>10} {:>12} {:>9} {:>9}  (GiB)\n", "stage", "weights", "grads", "optimizer",
                     "activations", "buffers", "peak");
  for (const auto& st : r.memory.per_stage) {
    out += fmt::format("  {:>5} {:>9.2f} {:>9.2f} {:>10.2f} {:>12.2f} {:>9.2f} {:>9.2f}\n", st.stage,
                       st.weights_bytes / kGiB, st.grads_bytes / kGiB, st.optimizer_bytes / kGiB,
                       st.activations_bytes / kGiB, st.buffers_bytes / kGiB, st.peak_bytes / kGiB);
  }
  if (!r.warnings.empty()) {
    out += "warnings\n";
    for (const auto& w : r.warnings) out += "  - " + w + "\n";
  }
  return out;
}

}  // namespace moesim::cli
