#include "planner/explain.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "program/host_caveat.hpp"
#include "planner/search_space.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string percent(double share) { return fmt::format("{:.0f} %", 100.0 * share); }

std::optional<program::DroplessHostCaveat> host_caveat_of(const PlanRequest& request, const Candidate& c) {
  const Scenario s = scenario_for(request, c);
  return program::dropless_host_caveat(s, schedule::plan_stages(s));
}

/// docs/accuracy.md Round 5: an MoE run whose dispatcher reads the token counts back (dropless, or a
/// capacity factor without padding) pays, in eager mode, host time per (MoE layer,
/// micro-batch) pass that the ranking does not price. Says what it would add to the winner and names
/// the feasible layout on the winner's GPU count that ranks first once every layout pays the low end
/// of the range, when that is another layout (compared by estimate, as the search ranked them).
void explain_host_caveat(const Plan& plan, const std::vector<CandidateEstimate>& feasible,
                         std::vector<std::string>& out) {
  const CandidateEstimate& win = plan.rows.front().estimate;
  const auto wc = host_caveat_of(plan.request, win.candidate);
  if (!wc) return;
  std::string line = fmt::format(
      "Not in the ranking: eager Megatron MoE runs that read the token counts back (dropless, or a capacity "
      "factor without padding) pay host time per (MoE layer, micro-batch) pass, {:.2f} to {:.2f} ms in published runs (docs/accuracy.md, Round 5); the winner runs {} passes on "
      "stage {}, its stage with the most MoE layers, +{:.3g} to {:.3g} s",
      1e3 * program::dropless_host_gap_low_s(), 1e3 * program::dropless_host_gap_high_s(), wc->passes, wc->stage,
      wc->low_s, wc->high_s);
  const CandidateEstimate* best = nullptr;
  std::optional<program::DroplessHostCaveat> bc;
  for (const CandidateEstimate& e : feasible) {
    if (e.candidate.gpus != win.candidate.gpus) continue;  // step times compare only on the same GPUs
    // Host time only adds: a layout already slower than the winner plus its host time cannot rank first,
    // and skipping it here spares building its scenario (tens of thousands of candidates).
    if (e.step_time_s >= win.step_time_s + wc->low_s) continue;
    const auto c = host_caveat_of(plan.request, e.candidate);
    if (!c || c->passes >= wc->passes) continue;
    const double total = e.step_time_s + c->low_s;
    if (total >= win.step_time_s + wc->low_s) continue;
    if (!best || total < best->step_time_s + bc->low_s) {
      best = &e;
      bc = c;
    }
  }
  if (best) {
    line += fmt::format("; with every layout paying the low end, {} ranks first: {} passes, {:.3f} + {:.3g} s "
                        "against the winner's {:.3f} + {:.3g} s (estimates)",
                        describe(plan.request, best->candidate), bc->passes, best->step_time_s, bc->low_s,
                        win.step_time_s, wc->low_s);
  }
  out.push_back(line + ". Full-iteration CUDA graphs with a sync-free dispatcher do not pay it; moe.host_sync_idle_s "
                       "prices a figure measured on your stack.");
}

}  // namespace

std::vector<std::pair<BreakdownCategory, double>> breakdown_categories(const Breakdown& b) {
  // Busy and idle time first, then each exposed traffic (ties in the sorted explanation keep this
  // order); exposed_comm is left out, being the sum of the *_comm rows (its delta would repeat theirs).
  using C = BreakdownCategory;
  constexpr C kOrder[] = {C::kCompute, C::kBubble, C::kTpComm,    C::kCpComm,  C::kEpComm,
                          C::kPpComm,  C::kDpComm, C::kOptimizer, C::kHostIdle};
  std::vector<std::pair<BreakdownCategory, double>> out;
  for (C c : kOrder) out.emplace_back(c, b.seconds(c));
  return out;
}

void explain_winner(Plan& plan, const std::vector<CandidateEstimate>& feasible) {
  if (plan.rows.empty()) return;
  const PlanRequest& req = plan.request;
  const PlanRow& w = plan.rows.front();
  const Result& r = w.result;
  std::vector<std::string>& out = plan.explanation;
  out.push_back(fmt::format("Winner: {} — {:.0f} tokens/s per GPU, {:.1f} % MFU, step {:.3f} s ({}), peak memory "
                            "{:.1f} of {:.1f} GiB on stage {}.",
                            describe(req, w.estimate.candidate), r.tokens_per_s_per_gpu, 100.0 * r.mfu, r.step_time_s,
                            w.simulated ? "event simulation" : "estimate", w.estimate.peak_bytes / kGiB,
                            r.memory.capacity_bytes / kGiB, w.estimate.peak_stage));
  // Where its step goes, largest first: what to attack next.
  auto cats = breakdown_categories(r.breakdown);
  std::stable_sort(cats.begin(), cats.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [category, seconds] : cats) {
    if (seconds <= 0 || r.step_time_s <= 0) continue;
    if (seconds / r.step_time_s < 0.01) continue;
    parts.push_back(fmt::format("{} {}", to_string(category), percent(seconds / r.step_time_s)));
  }
  if (!parts.empty()) {
    std::string line = "Its step (critical stage " + std::to_string(r.breakdown.critical_stage) + "): ";
    for (std::size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
    out.push_back(line + ".");
  }
  if (plan.rows.size() < 2) {
    explain_host_caveat(plan, feasible, out);
    return;
  }
  const PlanRow& ru = plan.rows[1];
  const Result& rr = ru.result;
  const auto wc = breakdown_categories(r.breakdown), rc = breakdown_categories(rr.breakdown);
  for (std::size_t i = 0; i < wc.size(); ++i) {
    // host_idle exists only where moe.host_sync_idle_s prices it; other plans keep their rows.
    if (wc[i].first == BreakdownCategory::kHostIdle && wc[i].second == 0 && rc[i].second == 0) continue;
    plan.vs_runner_up.push_back({std::string(to_string(wc[i].first)), wc[i].second, rc[i].second});
  }
  std::vector<CategoryDelta> diffs = plan.vs_runner_up;
  std::stable_sort(diffs.begin(), diffs.end(), [](const CategoryDelta& a, const CategoryDelta& b) {
    return std::abs(a.runner_up_s - a.winner_s) > std::abs(b.runner_up_s - b.winner_s);
  });
  const double gain = rr.step_time_s > 0 ? rr.step_time_s / r.step_time_s - 1.0 : 0.0;
  std::string line = fmt::format("It beats the runner-up, {}, by {:.1f} % ({:.3f} s vs {:.3f} s per step)", describe(req, ru.estimate.candidate),
                                 100.0 * gain, r.step_time_s, rr.step_time_s);
  std::vector<std::string> reasons;
  for (const auto& d : diffs) {
    const double delta = d.runner_up_s - d.winner_s;
    if (std::abs(delta) < 0.005 * std::max(r.step_time_s, 1e-12) || reasons.size() == 3) continue;
    reasons.push_back(fmt::format("{} {:.3f} s vs {:.3f} s ({})", d.category, d.winner_s, d.runner_up_s,
                                  delta > 0 ? "winner spends less" : "winner spends more"));
  }
  if (!reasons.empty()) {
    line += ": ";
    for (std::size_t i = 0; i < reasons.size(); ++i) line += (i ? "; " : "") + reasons[i];
  }
  out.push_back(line + ".");
  if (w.estimate.peak_bytes > ru.estimate.peak_bytes) {
    out.push_back(fmt::format("The runner-up needs {:.1f} GiB less memory at its peak ({:.1f} GiB): the choice if "
                              "headroom matters more than {:.1f} % throughput.",
                              (w.estimate.peak_bytes - ru.estimate.peak_bytes) / kGiB, ru.estimate.peak_bytes / kGiB,
                              100.0 * gain));
  }
  explain_host_caveat(plan, feasible, out);
}

std::string precision_risk(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "";
    case Precision::kFp16:
      return "needs dynamic loss scaling; overflow-prone at LLM scale, hence rarely used for pre-training today.";
    case Precision::kFp8:
      return "per-tensor FP8 (E4M3 forward, E5M2 gradients) with delayed or current scaling: outliers in one "
             "tensor cost the whole tensor's range; Transformer Engine keeps the first and last layers, norms, "
             "softmax and the optimizer in higher precision; long runs need loss-curve monitoring against BF16.";
    case Precision::kFp8Blockwise:
      return "DeepSeek-V3's recipe (1×128 activation and 128×128 weight scales): its report measures a relative "
             "loss error below 0.25 % against BF16 (DeepSeek-V3 technical report, arXiv:2412.19437, §3.3); "
             "embedding, output head, MoE gating, norms and attention stay in BF16/FP32.";
    case Precision::kMxfp8:
      return "Blackwell only: 32-element blocks with E8M0 scales; NVIDIA reports BF16-matching loss on 8B models "
             "over 15T tokens (Mishra et al., \"Recipes for Pre-training LLMs with MXFP8\", arXiv:2506.08027); "
             "quantize/cast kernels can eat most of the GEMM gain on small layers.";
    case Precision::kNvfp4:
      return "Blackwell only: 16-element blocks with E4M3 scales plus a per-tensor scale; NVIDIA's recipe keeps "
             "a few of the first and last transformer blocks in BF16, applies random Hadamard transforms "
             "to weight-gradient inputs, 2-D weight scaling and stochastic rounding of gradients (NVIDIA, "
             "\"Pretraining LLMs with NVFP4\", arXiv:2509.25149): highest accuracy risk of the formats; validate "
             "the loss curve on a short run first.";
  }
  return "";
}

std::vector<std::string> unsearched_knobs(const PlanRequest& request) {
  const Scenario& b = request.base;
  std::vector<std::string> out;
  if (b.model.is_moe()) {
    if (request.space.dispatcher.size() == 1) {
      out.push_back(fmt::format("dispatcher: held at '{}'", to_string(request.space.dispatcher.front())));
    }
    out.emplace_back("hybridep: not searched separately (priced like deepep: one network row per destination NVLink "
                     "domain, forwarded over NVLink)");
    out.push_back(b.moe.capacity_factor ? fmt::format("capacity factor: held at {:.2f}", *b.moe.capacity_factor)
                                        : std::string("capacity factor: held at dropless (a capacity factor changes "
                                                      "the model's quality, not only its speed)"));
  }
  out.push_back(fmt::format("distributed optimizer: held at {} with overlap_grad_reduce {} and overlap_param_gather {} "
                            "(turning them off only adds memory or exposed traffic)",
                            b.optimizer.distributed ? "on" : "off", b.optimizer.overlap_grad_reduce ? "on" : "off",
                            b.optimizer.overlap_param_gather ? "on" : "off"));
  out.push_back(fmt::format("tp_comm_overlap: held at {}", b.parallel.tp_comm_overlap ? "on (where tp > 1)" : "off"));
  out.push_back(fmt::format("fp8_param_gather: held at {} (on, in FP8 and MXFP8 candidates it drops the 16-bit weight "
                            "copy, and in FP8 halves the parameter all-gather; set it in the scenario's optimizer "
                            "section)",
                            b.optimizer.fp8_param_gather ? "on" : "off"));
  if (b.model.is_moe()) {
    out.push_back(fmt::format("a2a_overlap (combined 1F1B): held at {} (on: every candidate that can run it, EP > 1 "
                              "with pp 1 or vpp > 1 and no full recompute, hides its all-to-all behind another "
                              "micro-batch's compute; set it in the scenario's moe section)",
                              b.moe.a2a_overlap ? "on" : "off"));
  }
  out.push_back(fmt::format("grad_reduce_in_fp32: held at {} (off halves the gradient buffer and the gradient "
                            "reduce-scatter, as Megatron-Bridge's performance recipes run; set it in the scenario's "
                            "optimizer section)",
                            b.optimizer.grad_reduce_in_fp32 ? "on" : "off"));
  return out;
}

}  // namespace moesim::planner
