#include "planner/explain.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "planner/search_space.hpp"
#include "schedule/stage_plan.hpp"

namespace moesim::planner {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string percent(double share) { return fmt::format("{:.0f} %", 100.0 * share); }

/// The host model (program/host_ops): when the winner's GPUs wait for the host for a noticeable share
/// of the step, say so and what takes it away.
void explain_host_time(const Plan& plan, std::vector<std::string>& out) {
  const Result& r = plan.rows.front().result;
  const double idle = r.breakdown.host_idle;
  if (r.step_time_s <= 0 || idle < 0.05 * r.step_time_s) return;
  const Scenario& s = plan.request.base;
  std::string graphs;
  for (const CudaGraphScope scope : s.runtime.cuda_graph) graphs += (graphs.empty() ? "" : "+") + std::string(to_string(scope));
  std::string line = fmt::format(
      "Its GPUs wait {:.3g} s ({}) of the step for the host to launch their kernels (runtime.host {}, CUDA graphs: {})",
      idle, percent(idle / r.step_time_s), name_of(hw::kHostKindNames, s.runtime.host.kind),
      graphs.empty() ? std::string("none") : graphs);
  if (s.model.is_moe() && s.moe.reads_token_counts_back() && !s.runtime.full_iteration_graph()) {
    line += "; its dropless dispatcher reads the token counts back in every MoE forward, so the host loses its lead there";
  }
  out.push_back(line + ". CUDA graphs (runtime.cuda_graph), larger micro-batches or fewer local experts per rank cut it.");
}

}  // namespace

std::vector<std::pair<BreakdownCategory, double>> breakdown_categories(const Breakdown& b) {
  // Busy and idle time first, then each exposed traffic (ties in the sorted explanation keep this
  // order); exposed_comm is left out, being the sum of the *_comm rows (its delta would repeat theirs).
  using C = BreakdownCategory;
  constexpr C kOrder[] = {C::kCompute, C::kBubble,    C::kTpComm,      C::kCpComm,   C::kEpComm,
                          C::kPpComm,  C::kDpComm,    C::kOffloadComm, C::kOptimizer, C::kHostIdle};
  std::vector<std::pair<BreakdownCategory, double>> out;
  for (C c : kOrder) out.emplace_back(c, b.seconds(c));
  return out;
}

void explain_winner(Plan& plan) {
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
  explain_host_time(plan, out);
  if (w.estimate.candidate.offload) {
    const std::string modules = offload_modules_text(rescue_offload_modules(req.base.model.is_moe()), " and ");
    out.push_back(fmt::format("It fits only because the planner offloads the inputs of {} to host memory (the "
                              "scenario set no offload.activations): its GPUs wait {:.3g} s ({}) of the step for those "
                              "copies over the host link (offload_comm).",
                              modules, r.breakdown.offload_comm,
                              percent(r.step_time_s > 0 ? r.breakdown.offload_comm / r.step_time_s : 0.0)));
  }
  if (plan.rows.size() < 2) return;
  const PlanRow& ru = plan.rows[1];
  const Result& rr = ru.result;
  const auto wc = breakdown_categories(r.breakdown), rc = breakdown_categories(rr.breakdown);
  for (std::size_t i = 0; i < wc.size(); ++i) {
    // host_idle is 0 where the host keeps ahead of the GPU; such plans keep their rows.
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
}

void explain_estimated_rows(Plan& plan) {
  std::vector<std::string> tied;
  double slowest_simulated = 0, gap_min = 0, gap_max = 0;
  std::int64_t simulated = 0;
  for (const PlanRow& row : plan.rows) {
    if (row.tied) tied.push_back(std::to_string(row.rank));
    if (!row.simulated) continue;
    slowest_simulated = std::max(slowest_simulated, row.result.step_time_s);
    const double gap = row.result.step_time_s / row.estimate.step_time_s - 1.0;
    gap_min = simulated == 0 ? gap : std::min(gap_min, gap);
    gap_max = simulated == 0 ? gap : std::max(gap_max, gap);
    ++simulated;
  }
  if (!tied.empty()) {
    plan.explanation.push_back(fmt::format(
        "Rank{} {} tie{} with the row above: the same step time at the same fidelity; the candidate index orders them "
        "(marked = in the table).",
        tied.size() > 1 ? "s" : "", fmt::join(tied, ", "), tied.size() > 1 ? "" : "s"));
  }
  std::vector<std::string> faster;
  for (const PlanRow& row : plan.rows) {
    if (!row.simulated && simulated > 0 && row.result.step_time_s < slowest_simulated) {
      faster.push_back(std::to_string(row.rank));
    }
  }
  if (faster.empty()) return;
  plan.explanation.push_back(fmt::format(
      "Rank{} {} (est) show{} a shorter step than a simulated row above: {} a closed-form estimate, not simulated, and "
      "the {} finalists' simulations came out {:+.1f} % to {:+.1f} % against their own estimates, so {} not known to be "
      "faster; "
      "estimated rows stay below the simulated ones (raise --finalists to simulate more).",
      faster.size() > 1 ? "s" : "", fmt::join(faster, ", "), faster.size() > 1 ? "" : "s",
      faster.size() > 1 ? "each is" : "it is", simulated, 100.0 * gap_min, 100.0 * gap_max,
      faster.size() > 1 ? "they are" : "it is"));
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
    const auto& listed = request.space.dispatcher;
    if (std::find(listed.begin(), listed.end(), Dispatcher::kHybridep) == listed.end()) {
      out.emplace_back(b.system.gpu.publishes_both_ep_kernels()
                           ? "hybridep: not searched (--dispatcher lists the dispatchers)"
                           : "hybridep: not searched (it moves deepep's traffic, one network row per destination "
                             "NVLink domain, at the same NVLink rate on this GPU: no published kernel rates tell "
                             "them apart)");
    }
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
  out.push_back(fmt::format("store_param_remainders: held at {} (on: the optimizer keeps a 16-bit remainder instead "
                            "of an fp32 master weight, 10 bytes of state per parameter instead of 12, with bf16 "
                            "weights; set it in the scenario's optimizer section)",
                            b.optimizer.store_param_remainders ? "on" : "off"));
  const std::string modules = offload_modules_text(b.offload.activations, ", ");
  const std::string rescue = offload_modules_text(rescue_offload_modules(b.model.is_moe()), "+");
  out.push_back(fmt::format("offload: held at activations [{}], optimizer_fraction {}{} (offloading trades host-link "
                            "time for GPU memory: docs/memory.md \"Offloading\"; set it in the scenario's offload "
                            "section)",
                            modules, b.offload.optimizer_fraction,
                            b.offload.activations.empty()
                                ? fmt::format("; a layout that does not fit otherwise is tried with {} offloaded", rescue)
                                : std::string()));
  return out;
}

}  // namespace moesim::planner
