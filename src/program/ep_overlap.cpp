#include "program/ep_overlap.hpp"

#include <algorithm>
#include <string_view>

#include "collective/nccl_constants.hpp"

namespace moesim::program {
namespace {

bool is_ep(const LayerOp& op) { return op.kind == OpKind::kEpComm; }

/// The op list split at its two all-to-alls: time before the first, between them, after the second.
struct Segments {
  double first = 0, second = 0;  ///< the two all-to-alls, in execution order
  double before = 0, between = 0, after = 0;
  bool found = false;
};

Segments split(const std::vector<LayerOp>& ops) {
  Segments s;
  int seen = 0;
  for (const LayerOp& op : ops) {
    if (is_ep(op)) {
      // The size-independent latency stays exposed: the simulation keeps it as a transfer's floor.
      (seen == 0 ? s.first : s.second) += op.seconds - op.latency_s;
      seen = std::min(seen + 1, 2);
      continue;
    }
    // No kernel runs while the host or an offload copy is awaited: nothing hides a partner's all-to-all.
    if (op.kind == OpKind::kHostIdle || op.kind == OpKind::kOffloadComm) continue;
    (seen == 0 ? s.before : seen == 1 ? s.between : s.after) += op.seconds;
  }
  s.found = seen == 2;
  return s;
}

}  // namespace

EpPairSaving ep_pair_saving(const OpProgram& moe_layer, double comm_sm_share) {
  EpPairSaving out;
  const Segments f = split(moe_layer.forward);   // A_F = before + after, D_F, M_F, C_F
  const Segments b = split(moe_layer.backward);  // A_B = before + after, C_B, M_B, D_B
  if (!f.found || !b.found) return out;
  // Compute c beside all-to-all e runs at (1 − share) of its speed while e lasts: the phase takes
  // max(e, c + share·e) when c outlasts (1 − share)·e, else e; it saves min(c, (1 − share)·e).
  const double keep = 1.0 - std::clamp(comm_sm_share, 0.0, 1.0);
  const auto hides = [keep](double all_to_all, double compute) { return std::min(compute, keep * all_to_all); };
  const double attention_f = f.before + f.after, attention_b = b.before + b.after;
  out.dispatch_forward = hides(f.first, b.between);
  out.combine_forward = hides(f.second, attention_b);
  out.combine_backward = hides(b.first, attention_f);
  out.dispatch_backward = hides(b.second, f.between);
  return out;
}

double dispatcher_sm_share(const Scenario& s) {
  const double sms = static_cast<double>(s.system.gpu.sm_count);
  if (sms <= 0) return 0;
  switch (s.moe.dispatcher) {
    case Dispatcher::kDeepep:
    case Dispatcher::kHybridep: return static_cast<double>(s.moe.kernel_sms()) / sms;
    case Dispatcher::kAlltoall: return static_cast<double>(collective::nccl::kP2pChannels) / sms;
    case Dispatcher::kAllgather: break;  // no combined 1F1B (scenario validation refuses it)
  }
  return 0;
}

double ep_hidden_seconds(const EpPairSaving& saving, const LayerOp& op) {
  if (!is_ep(op)) return 0;
  const bool dispatch = std::string_view(op.name) == "dispatch";
  if (op.phase == OpPhase::kForward) return dispatch ? saving.dispatch_forward : saving.combine_forward;
  return dispatch ? saving.dispatch_backward : saving.combine_backward;
}

std::vector<std::int32_t> combined_partners(const std::vector<schedule::PipelinePass>& order) {
  std::vector<std::int32_t> partner(order.size(), -1);
  for (std::size_t i = 0; i + 1 < order.size();) {
    const auto& a = order[i];
    const auto& b = order[i + 1];
    if (a.backward != b.backward && a.microbatch != b.microbatch) {
      partner[i] = static_cast<std::int32_t>(i + 1);
      partner[i + 1] = static_cast<std::int32_t>(i);
      i += 2;
    } else {
      i += 1;
    }
  }
  return partner;
}

std::int64_t combined_pairs(const std::vector<schedule::PipelinePass>& order) {
  const auto partner = combined_partners(order);
  return static_cast<std::int64_t>(std::count_if(partner.begin(), partner.end(), [](std::int32_t p) { return p >= 0; })) / 2;
}

}  // namespace moesim::program
