// A scenario as Megatron-LM arguments and back (scenario/megatron_args, config/megatron_command_loader):
// every flag moesim writes is one Megatron-LM's parser defines (tests/data/megatron-lm-arguments.txt,
// read from megatron/training/arguments.py), reading the arguments back gives the same run, and a
// command line with a bad value is refused naming the flag.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "../scratch_files.hpp"
#include "../test_paths.hpp"
#include "config/builtin_scenarios.hpp"
#include "config/hw_loader.hpp"
#include "config/megatron_command_loader.hpp"
#include "config/model_loader.hpp"
#include "core/error.hpp"
#include "scenario/megatron_args.hpp"

using namespace moesim;

namespace {

std::set<std::string> megatron_lm_flags() {
  std::ifstream in(test::source_dir() / "tests" / "data" / "megatron-lm-arguments.txt");
  std::set<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') out.insert(line);
  }
  return out;
}

/// The scenarios the round trip covers: MoE with every dispatcher, MLA + MTP, dense, each precision,
/// each recompute form, CUDA graphs, fusions and offloading changed from Megatron's defaults.
std::vector<Scenario> cases() {
  std::vector<Scenario> out;
  Scenario mixtral = *config::load_builtin_scenario("mixtral-8x7b-h100-64");
  out.push_back(mixtral);

  Scenario dsv3 = mixtral;
  dsv3.model = config::load_model_preset("deepseek-v3");
  dsv3.model_ref = "deepseek-v3";
  dsv3.system = config::load_system_preset("hgx-h100", 256);
  dsv3.parallel = {.tp = 1, .pp = 1, .vpp = 1, .cp = 1, .ep = 32, .etp = 1, .dp = 256};
  dsv3.parallel.sequence_parallel = false;
  dsv3.precision = Precision::kFp8Blockwise;
  dsv3.moe.dispatcher = Dispatcher::kDeepep;
  dsv3.moe.dispatcher_sms = 24;
  dsv3.moe.a2a_overlap = true;
  dsv3.recompute = {RecomputeGranularity::kSelective, {RecomputeModule::kMlaUpProj, RecomputeModule::kMoeAct}};
  dsv3.runtime.fusions.push_back(Fusion::kMoePermute);
  dsv3.runtime.fusions.push_back(Fusion::kMoeRouter);
  dsv3.runtime.cuda_graph = {CudaGraphScope::kAttn, CudaGraphScope::kMoeRouter, CudaGraphScope::kMoePreprocess};
  dsv3.optimizer.grad_reduce_in_fp32 = false;
  dsv3.offload.activations = {OffloadModule::kExpertFc1, OffloadModule::kMoeAct};
  out.push_back(dsv3);

  Scenario llama = mixtral;
  llama.model = config::load_model_preset("llama-3-70b");
  llama.model_ref = "llama-3-70b";
  llama.parallel = {.tp = 4, .pp = 4, .vpp = 5, .cp = 2, .ep = 1, .etp = 4, .dp = 2};
  llama.parallel.sequence_parallel = true;
  llama.parallel.tp_comm_overlap = true;
  llama.precision = Precision::kFp8;
  llama.fp8_recipe = Fp8Recipe::kTensorwise;
  llama.recompute = {RecomputeGranularity::kFull, {}};
  llama.runtime.cuda_graph = {CudaGraphScope::kLayer};
  std::erase(llama.runtime.fusions, Fusion::kRope);
  llama.offload.optimizer_fraction = 0.5;
  llama.optimizer.fp8_param_gather = true;
  out.push_back(llama);

  Scenario qwen = mixtral;
  qwen.model = config::load_model_preset("qwen3-30b-a3b");
  qwen.model_ref = "qwen3-30b-a3b";
  qwen.system = config::load_system_preset("dgx-b200", 64);
  qwen.parallel = {.tp = 1, .pp = 1, .vpp = 1, .cp = 1, .ep = 8, .etp = 1, .dp = 64};
  qwen.parallel.sequence_parallel = false;
  qwen.precision = Precision::kMxfp8;
  qwen.moe.dispatcher = Dispatcher::kAllgather;
  qwen.moe.capacity_factor = 1.25;
  qwen.moe.pad_to_capacity = true;
  qwen.moe.grouped_gemm = false;
  qwen.runtime.cuda_graph = {CudaGraphScope::kFullIteration};
  out.push_back(qwen);

  Scenario nvfp4 = qwen;
  nvfp4.precision = Precision::kNvfp4;
  nvfp4.moe.dispatcher = Dispatcher::kHybridep;
  nvfp4.moe.capacity_factor.reset();
  nvfp4.moe.pad_to_capacity = false;
  nvfp4.optimizer.fp4_param_gather = true;
  nvfp4.runtime.cuda_graph.clear();
  out.push_back(nvfp4);
  for (Scenario& s : out) validate_layout(s);
  return out;
}

std::string command_text(const Scenario& s) {
  return "torchrun --nproc-per-node 8 --nnodes 8 pretrain_gpt.py \\\n" + megatron_command_text(megatron_args(s)) +
         "  --lr 3e-4 --data-path /data/x --log-interval 1  # the rest of a real command\n";
}

/// The same run: everything Megatron's arguments say (the model bar its name, layout, batch,
/// precision, recompute, MoE, optimizer, CUDA graphs, fusions, offloading).
void check_same_run(const Scenario& a, const Scenario& b) {
  model::ModelSpec ma = a.model, mb = b.model;
  ma.name = mb.name = "";
  ma.source = mb.source = "";
  CHECK(ma == mb);
  CHECK(a.training.seq_length == b.training.seq_length);
  CHECK(a.training.micro_batch_size == b.training.micro_batch_size);
  CHECK(a.training.global_batch_size == b.training.global_batch_size);
  CHECK(a.attention_backend == b.attention_backend);
  const auto& p = a.parallel;
  const auto& q = b.parallel;
  CHECK(std::tie(p.tp, p.pp, p.vpp, p.cp, p.ep, p.etp, p.dp, p.sequence_parallel, p.tp_comm_overlap,
                 p.account_for_embedding_in_pipeline_split, p.account_for_loss_in_pipeline_split) ==
        std::tie(q.tp, q.pp, q.vpp, q.cp, q.ep, q.etp, q.dp, q.sequence_parallel, q.tp_comm_overlap,
                 q.account_for_embedding_in_pipeline_split, q.account_for_loss_in_pipeline_split));
  CHECK(a.precision == b.precision);
  if (a.precision == Precision::kFp8) CHECK(a.fp8_recipe == b.fp8_recipe);
  CHECK(a.recompute.granularity == b.recompute.granularity);
  CHECK(a.recompute.modules == b.recompute.modules);
  if (a.model.is_moe()) {
    CHECK(a.moe.dispatcher == b.moe.dispatcher);
    CHECK(a.moe.capacity_factor == b.moe.capacity_factor);
    CHECK(a.moe.pad_to_capacity == b.moe.pad_to_capacity);
    CHECK(a.moe.grouped_gemm == b.moe.grouped_gemm);
    CHECK(a.moe.a2a_overlap == b.moe.a2a_overlap);
    CHECK(a.moe.dispatcher_sms == b.moe.dispatcher_sms);
  }
  const auto& o = a.optimizer;
  const auto& r = b.optimizer;
  CHECK(std::tie(o.distributed, o.overlap_grad_reduce, o.overlap_param_gather, o.fp8_param_gather, o.fp4_param_gather,
                 o.grad_reduce_in_fp32, o.store_param_remainders) ==
        std::tie(r.distributed, r.overlap_grad_reduce, r.overlap_param_gather, r.fp8_param_gather, r.fp4_param_gather,
                 r.grad_reduce_in_fp32, r.store_param_remainders));
  CHECK(a.runtime.cuda_graph == b.runtime.cuda_graph);
  auto fa = a.runtime.fusions, fb = b.runtime.fusions;
  if (!a.model.is_moe()) std::erase_if(fa, [](Fusion f) { return f == Fusion::kMoePermute || f == Fusion::kMoeRouter; });
  std::sort(fa.begin(), fa.end());
  std::sort(fb.begin(), fb.end());
  CHECK(fa == fb);
  CHECK(a.offload.activations == b.offload.activations);
  CHECK(a.offload.optimizer_fraction == b.offload.optimizer_fraction);
}

}  // namespace

TEST_CASE("every flag moesim emits is one Megatron-LM's argument parser defines") {
  const std::set<std::string> known = megatron_lm_flags();
  REQUIRE(known.size() > 300);
  for (const Scenario& s : cases()) {
    CAPTURE(s.model.name);
    for (const std::string& token : megatron_args(s)) {
      if (!token.starts_with("--")) continue;
      CHECK_MESSAGE(known.contains(token), token, " is not a Megatron-LM argument");
    }
  }
}

TEST_CASE("a scenario's Megatron-LM arguments read back as the same run") {
  for (const Scenario& s : cases()) {
    CAPTURE(s.model.name);
    const std::string file = test::write_scratch("megatron-args", "run.sh", command_text(s));
    const std::string system = s.system.name + ":" + std::to_string(s.system.gpus);
    const MegatronImport back = config::load_megatron_command(file, system);
    check_same_run(s, back.scenario);
    CHECK(back.ignored == std::vector<std::string>{"--lr", "--data-path", "--log-interval"});
    // And again: the emitted arguments of the imported scenario are the same text.
    CHECK(megatron_args(back.scenario) == megatron_args(s));
  }
}

TEST_CASE("Megatron-Bridge overrides name the recipe's config sections") {
  const Scenario s = cases()[1];
  const auto overrides = bridge_overrides(s);
  const auto has = [&](const std::string& line) {
    return std::find(overrides.begin(), overrides.end(), line) != overrides.end();
  };
  CHECK(has("model.tensor_model_parallel_size=1"));
  CHECK(has("model.pipeline_model_parallel_size=1"));
  CHECK(has("model.expert_model_parallel_size=32"));
  CHECK(has("model.moe_token_dispatcher_type=flex"));
  CHECK(has("model.moe_flex_dispatcher_backend=deepep"));
  CHECK(has("train.global_batch_size=256"));
  CHECK(has("dataset.seq_length=4096"));
  CHECK(has("model.cuda_graph_modules=[attn,moe_router,moe_preprocess]"));
  CHECK(has("mixed_precision=bf16_with_fp8_subchannel_scaling_mixed"));
  std::ifstream in(test::source_dir() / "tests" / "data" / "megatron-bridge-config-fields.txt");
  std::set<std::string> fields;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') fields.insert(line);
  }
  REQUIRE(fields.size() > 100);
  for (const std::string& o : overrides) {
    const std::string key = o.substr(0, o.find('='));
    if (key == "mixed_precision") continue;  // a preset's name, not a field
    CHECK_MESSAGE(fields.contains(key), key, " is not a Megatron-Bridge config field");
  }
}

TEST_CASE("a Megatron-LM command line with a bad value is refused naming the flag") {
  const std::string good = megatron_command_text(megatron_args(cases()[0]));
  const auto refused = [&](const std::string& text, const std::string& expected) {
    const std::string file = test::write_scratch("megatron-args", "bad.sh", text);
    try {
      (void)config::load_megatron_command(file, "hgx-h100:64");
      FAIL("accepted: ", text);
    } catch (const InputError& e) {
      CHECK(std::string(e.what()) == file + ": " + expected);
    }
  };
  refused("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --global-batch-size 8 --bf16",
          "at argument --vocab-size: missing: moesim cannot read a tokenizer; give its vocabulary size (padded as "
          "Megatron pads it); allowed: --vocab-size N");
  refused(test::replaced_once(good, "--tensor-model-parallel-size 1", "--tensor-model-parallel-size x"), "at argument --tensor-model-parallel-size: value x: not an integer in range; allowed: an integer ≥ 1");
  refused(test::replaced_once(good, "alltoall", "alltoall_seq"),
          "at argument --moe-token-dispatcher-type: value alltoall_seq: unknown value; allowed: alltoall, allgather, flex");
  refused(good + " --tensor-model-parallel-size 2",
          "at argument --tensor-model-parallel-size: a flag given twice; allowed: each flag once");
  CHECK_THROWS_AS((void)config::load_megatron_command(test::write_scratch("megatron-args", "ok.sh", good), "hgx-h100"), InputError);
}
