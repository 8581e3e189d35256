#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "../test_paths.hpp"
#include "accuracy/accuracy.hpp"
#include "config/published_loader.hpp"

using namespace moesim;

// The bounds of the accuracy issue (docs/accuracy.md), asserted at fidelity simulation, the default:
// MAPE <= 10 % on the dense public groups, <= 15 % on the public MoE points.

namespace {
const std::vector<accuracy::PublishedPoint>& points() {
  static const auto p = config::load_published_points((test::source_dir() / "tests/validation/published.json").string());
  return p;
}
void print(const accuracy::AccuracyReport& rep) {
  for (const auto& o : rep.outcomes) {
    std::printf("  %-48s published %9.4g predicted %9.4g error %+6.1f%%\n", o.point->id.c_str(), o.point->value,
                o.predicted, 100.0 * o.error);
  }
  for (const auto& g : rep.groups) std::printf("  group %s: %d points, MAPE %.1f%%\n", g.group.c_str(), g.points, 100 * g.mape);
}

struct Slice {
  int points = 0;
  double mape = 0;
};

/// MAPE over the outcomes of one group whose subgroup ("model/gpu") passes `keep`.
Slice slice(const std::string& group, const std::function<bool(const std::string&)>& keep) {
  static std::map<std::string, accuracy::AccuracyReport> reports;
  auto it = reports.find(group);
  if (it == reports.end()) it = reports.emplace(group, accuracy::run_accuracy(points(), group)).first;
  Slice s;
  for (const auto& o : it->second.outcomes) {
    if (!o.failure.empty() || !keep(o.point->subgroup)) continue;
    ++s.points;
    s.mape += std::abs(o.error);
    std::printf("  %-80s error %+6.1f%%\n", o.point->id.c_str(), 100.0 * o.error);
  }
  if (s.points > 0) s.mape /= s.points;
  std::printf("  %s slice: %d points, MAPE %.1f%%\n", group.c_str(), s.points, 100 * s.mape);
  return s;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
/// Megatron-Bridge subgroups are "<model>/<gpu>"; H100 rows read "h100-sxm-80gb".
auto bridge(const std::string& model_prefix, const std::string& gpu) {
  return [=](const std::string& sub) { return starts_with(sub, model_prefix) && ends_with(sub, "/" + gpu); };
}
}  // namespace

TEST_CASE("accuracy: Narayanan 2021 Table 1 (A100, GPT 1.7B-1T) MAPE <= 10%") {
  const auto rep = accuracy::run_accuracy(points(), "narayanan2021");
  print(rep);
  REQUIRE(rep.groups.size() == 1);
  CHECK(rep.groups[0].points == 10);
  CHECK(rep.groups[0].mape <= 0.10);
}

TEST_CASE("accuracy: Korthikanti 2022 step times and MFU (A100) MAPE <= 10%") {
  const auto rep = accuracy::run_accuracy(points(), "korthikanti2022");
  print(rep);
  REQUIRE(rep.groups.size() == 1);
  CHECK(rep.groups[0].points == 12);
  CHECK(rep.groups[0].mape <= 0.10);
}

TEST_CASE("accuracy: Megatron-Core H100 weak scaling (GPT 1.7B-462B) MAPE <= 10%") {
  const auto rep = accuracy::run_accuracy(points(), "mcore-weak-scaling");
  print(rep);
  REQUIRE(rep.groups.size() == 1);
  CHECK(rep.groups[0].points == 9);
  CHECK(rep.groups[0].mape <= 0.10);
}

TEST_CASE("accuracy: Megatron-Bridge Llama-3 8B/70B/405B on H100 MAPE <= 10%") {
  const Slice s = slice("megatron-bridge", bridge("llama-3", "h100-sxm-80gb"));
  CHECK(s.points >= 2);
  CHECK(s.mape <= 0.10);
}

// Not met yet (docs/accuracy.md, "What is left"): Blackwell FP8/MXFP8/NVFP4 rows are over-predicted.
TEST_CASE("accuracy: Megatron-Bridge Llama-3 8B/70B/405B on B200 and GB200 MAPE <= 10%" * doctest::may_fail()) {
  for (const char* gpu : {"b200", "gb200"}) {
    CAPTURE(gpu);
    const Slice s = slice("megatron-bridge", bridge("llama-3", gpu));
    CHECK(s.points >= 2);
    CHECK(s.mape <= 0.10);
  }
}

// Not met yet on B200 (its newest row, 26.04.01, predates the MoE speed-ups of 26.06).
TEST_CASE("accuracy: Megatron-Bridge Qwen3-30B-A3B on every GPU type MAPE <= 15%" * doctest::may_fail()) {
  for (const char* gpu : {"h100-sxm-80gb", "b200", "b300", "gb200", "gb300"}) {
    CAPTURE(gpu);
    const Slice s = slice("megatron-bridge", bridge("qwen3-30b-a3b", gpu));
    CHECK(s.points >= 1);
    CHECK(s.mape <= 0.15);
  }
}

// Not met yet: +16 %.
TEST_CASE("accuracy: Megatron-Core MoE Mixtral-8x7B (64 H100) error <= 15%" * doctest::may_fail()) {
  const auto rep = accuracy::run_accuracy(points(), "mcore-moe");
  print(rep);
  REQUIRE(rep.groups.size() == 1);
  CHECK(rep.groups[0].mape <= 0.15);
}

TEST_CASE("accuracy: superseded Megatron-Bridge releases and LoRA rows are skipped with a reason") {
  int superseded = 0, lora_bridge = 0, lora_nemo = 0;
  for (const auto& p : points()) {
    if (p.skip_reason.rfind("superseded", 0) == 0) ++superseded;
    // Every LoRA run is skipped, from either table: running one as full training under-predicts it
    // (frozen base weights have no weight-gradient GEMMs, optimizer step or gradient traffic).
    if (p.id.find("-lora-") == std::string::npos) continue;
    CHECK_MESSAGE(!p.skip_reason.empty(), p.id << " runs");
    if (p.skip_reason.rfind("LoRA", 0) == 0) ++(p.id.rfind("mb-", 0) == 0 ? lora_bridge : lora_nemo);
  }
  CHECK(superseded > 0);
  CHECK(lora_bridge > 0);
  CHECK(lora_nemo > 0);  // NeMo 24.07's Llama-2 7B / 13B / 70B LoRA rows
}

TEST_CASE("accuracy: every end-to-end point either runs or says why it is skipped") {
  const auto rep = accuracy::run_accuracy(points());
  for (const auto* p : rep.skipped) CHECK_MESSAGE(!p->skip_reason.empty(), p->id);
  for (const auto& o : rep.outcomes) CHECK_MESSAGE(o.failure.empty(), o.point->id << ": " << o.failure);
  CHECK(rep.outcomes.size() > 60);
  std::printf("  all points: %zu run, %zu skipped, overall MAPE %.1f%%\n", rep.outcomes.size(), rep.skipped.size(),
              100 * rep.overall_mape);
}

// docs/accuracy.md "Megatron-Bridge recipe settings": what the release recipes set and the table
// does not print reaches every Megatron-Bridge scenario, and nothing else.
TEST_CASE("accuracy: Megatron-Bridge points carry their recipes' optimizer, TP-overlap and dispatcher settings") {
  auto find = [](const std::string& id) -> const accuracy::PublishedPoint& {
    for (const auto& p : points()) {
      if (p.id == id) return p;
    }
    FAIL("no point " << id);
    return points().front();
  };
  const auto& mx = find("mb-26-06-pre-training-dgx-gb300-llama3-1-405b-mxfp8-256-0-tokens_per_s_per_gpu");
  CHECK_FALSE(mx.scenario.optimizer.grad_reduce_in_fp32);
  CHECK(mx.scenario.optimizer.fp8_param_gather);
  CHECK_FALSE(mx.scenario.optimizer.fp4_param_gather);
  CHECK(mx.scenario.parallel.tp_comm_overlap);

  const auto& nv = find("mb-26-06-pre-training-dgx-gb300-llama3-1-405b-nvfp4-256-0-tokens_per_s_per_gpu");
  CHECK(nv.scenario.optimizer.fp4_param_gather);
  CHECK_FALSE(nv.scenario.optimizer.fp8_param_gather);
  CHECK_FALSE(nv.scenario.parallel.tp_comm_overlap);  // "tp_comm_overlap = False if precision == 'nvfp4'"

  const auto& qwen = find("mb-26-06-pre-training-dgx-h100-qwen3-30b-a3b-fp8-16-0-tokens_per_s_per_gpu");
  CHECK(qwen.scenario.moe.dispatcher == Dispatcher::kHybridep);
  bool said = false;
  for (const auto& a : qwen.assumed) said = said || a.find("dispatcher flex/hybridep on 32 SMs") != std::string::npos;
  CHECK(said);

  // Other publications keep Megatron-LM's defaults, except where a submission's own configuration
  // says otherwise (the MLPerf test below).
  for (const auto& p : points()) {
    if (p.group == "megatron-bridge" || p.group == "mlperf" || !p.skip_reason.empty()) continue;
    CHECK_MESSAGE(p.scenario.optimizer.grad_reduce_in_fp32, p.id);
    CHECK_MESSAGE(!p.scenario.optimizer.fp4_param_gather, p.id);
  }
}

// The MLPerf v3.1 GPT-3 record leaves out the virtual pipeline and micro-batch; the submission's own
// configuration files give them (published_loader.cpp, SubmissionConfig): VPP 12 from custom.yaml's
// default, micro-batch 1 from the 1344-node config, bf16 gradient sync from distributed_fused_adam.yaml.
TEST_CASE("accuracy: the MLPerf GPT-3 point takes what the record leaves out from the submission's config") {
  const accuracy::PublishedPoint* ml = nullptr;
  for (const auto& p : points()) {
    if (p.id == "mlperf-v3.1-nvidia-eos-gpt3-10752-tokens") ml = &p;
  }
  REQUIRE(ml != nullptr);
  REQUIRE(ml->skip_reason.empty());
  CHECK(ml->scenario.parallel.tp == 4);
  CHECK(ml->scenario.parallel.pp == 8);
  CHECK(ml->scenario.parallel.vpp == 12);
  CHECK(ml->scenario.training.micro_batch_size == 1);
  CHECK_FALSE(ml->scenario.optimizer.grad_reduce_in_fp32);
  int cited = 0;
  for (const auto& a : ml->assumed) cited += a.find("MLPerf Training v3.1 NVIDIA GPT-3 config") != std::string::npos;
  CHECK(cited == 3);  // vpp, micro-batch and gradient sync each name their source
}
