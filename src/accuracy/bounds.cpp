#include "accuracy/bounds.hpp"

#include <cmath>
#include <initializer_list>
#include <string>

namespace moesim::accuracy {

bool BoundSlice::contains(const PublishedPoint& p) const {
  if (p.group != group) return false;
  if (model_prefix.empty()) return true;
  const std::string& sub = p.subgroup;
  const std::string tail = "/" + gpu;
  return sub.rfind(model_prefix, 0) == 0 && sub.size() >= tail.size() &&
         sub.compare(sub.size() - tail.size(), tail.size(), tail) == 0;
}

const std::vector<BoundSlice>& issue_bounds() {
  static const std::vector<BoundSlice> bounds = [] {
    std::vector<BoundSlice> b = {
        {"narayanan2021 (A100, GPT 1.7B-1T)", "narayanan2021", "", "", 0.10},
        {"korthikanti2022 (A100, step times and MFU)", "korthikanti2022", "", "", 0.10},
        {"mcore-weak-scaling (H100, GPT 1.7B-462B)", "mcore-weak-scaling", "", "", 0.10},
    };
    // Megatron-Bridge subgroups are "<model>/<gpu>" with the GPU as the file spells it (H100 rows read
    // "h100-sxm-80gb"); "llama-3" covers Llama-3 8B, 70B and Llama-3.1 405B.
    struct Gpu {
      const char* label;
      const char* subgroup;
    };
    auto bridge = [&](const char* model, const char* prefix, std::initializer_list<Gpu> gpus, double max_mape) {
      for (const Gpu& g : gpus) {
        b.push_back({std::string("Megatron-Bridge ") + model + " on " + g.label, "megatron-bridge", prefix, g.subgroup,
                     max_mape});
      }
    };
    bridge("Llama-3", "llama-3", {{"H100", "h100-sxm-80gb"}, {"B200", "b200"}, {"GB200", "gb200"}}, 0.10);
    bridge("Qwen3-30B-A3B", "qwen3-30b-a3b",
           {{"H100", "h100-sxm-80gb"}, {"B200", "b200"}, {"B300", "b300"}, {"GB200", "gb200"}, {"GB300", "gb300"}}, 0.15);
    b.push_back({"mcore-moe (Mixtral-8x7B, 64 H100)", "mcore-moe", "", "", 0.15});
    return b;
  }();
  return bounds;
}

std::vector<BoundOutcome> evaluate_bounds(const AccuracyReport& report, const std::vector<BoundSlice>& slices) {
  std::vector<BoundOutcome> out;
  for (const BoundSlice& slice : slices) {
    BoundOutcome b;
    b.slice = &slice;
    for (const PointOutcome& o : report.outcomes) {
      if (!o.failure.empty() || !slice.contains(*o.point)) continue;
      b.outcomes.push_back(&o);
      b.mape += std::abs(o.error);
      b.bias += o.speed_error;
    }
    if (b.outcomes.empty()) continue;
    b.mape /= static_cast<double>(b.outcomes.size());
    b.bias /= static_cast<double>(b.outcomes.size());
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace moesim::accuracy
