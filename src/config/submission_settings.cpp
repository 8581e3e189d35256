#include "config/submission_settings.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include <fmt/format.h>

namespace moesim::config {
namespace {

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// NeMo Framework Launcher at the 24.07 tag (github.com/NVIDIA/NeMo-Framework-Launcher @ 8325688), the
// release of the NeMo 24.07 performance summary (docs/source/performance/performance_summary.md):
// - every training config (conf/training/{gpt3,llama,nemotron}/*.yaml) and the SFT config
//   (conf/peft/llama/sft.yaml) runs optim.name distributed_fused_adam with megatron_amp_O2 true, and
//   NeMo's megatron_base_model.py setup_optimization then sets store_param_remainders = True for bf16
//   weights (store_params = True instead when fp8_params is on);
// - the H100 FP8 example scripts that reproduce the table (examples/training/gpt/h100/*_fp8_*.sh,
//   examples/training/llama/h100/llama{2,3}_*_fp8.sh) add +training.model.optim.grad_sync_dtype=bf16;
//   conf/training/nemotron/nemotron_340b.yaml has optim.grad_sync_dtype bf16 and
//   activations_checkpoint_granularity selective (its layout, PP 12 VP 8, is not the table's PP 8 VP 12);
//   the Nemotron 8B/22B scripts and configs set no grad_sync_dtype (fp32);
// - SFT: conf/peft/llama/sft.yaml optim.grad_sync_dtype bf16; examples/peft/llama/h100/7b_1node.sh,
//   13b_1node.sh and 70b_2node.sh add ++peft.model.fp8_params=true, and 13b/70b set
//   virtual_pipeline_model_parallel_size 10 and 20, which the fine-tuning table does not print.
constexpr std::string_view kLauncher2407 = "NeMo-Framework-Launcher 24.07 (8325688)";
// The long-sequence table (NeMo 24.03.01): conf/training/llama/llama2_7b.yaml at the launcher's
// 24.03.01 tag (5c7e280): distributed_fused_adam, megatron_amp_O2 true, no grad_sync_dtype.
constexpr std::string_view kLauncher240301 = "NeMo-Framework-Launcher 24.03.01 (5c7e280)";

SubmissionSettings nemo2407(const std::string& id) {
  SubmissionSettings s;
  if (contains(id, "-sft-")) {
    s.grad_reduce_in_fp32 = false;
    s.fp8_param_gather = true;  // fp8_params: no remainders, the optimizer stores fp32 master weights
    if (contains(id, "llama2_13b")) s.vpp = 10;
    if (contains(id, "llama2_70b")) s.vpp = 20;
    s.source = fmt::format("{}: conf/peft/llama/sft.yaml, examples/peft/llama/h100/*.sh (grad_sync_dtype bf16, fp8_params)",
                           kLauncher2407);
    return s;
  }
  s.store_param_remainders = true;
  if (starts_with(id, "nemo2407-gpt3-") || starts_with(id, "nemo2407-llama")) {
    s.grad_reduce_in_fp32 = false;
    s.source = fmt::format("{}: examples/training/{{gpt,llama}}/h100/*_fp8*.sh (grad_sync_dtype bf16), "
                           "distributed_fused_adam with param remainders",
                           kLauncher2407);
  } else if (starts_with(id, "nemo2407-nemotron-340b")) {
    s.grad_reduce_in_fp32 = false;
    s.recompute = RecomputeGranularity::kSelective;
    s.source = fmt::format("{}: conf/training/nemotron/nemotron_340b.yaml (grad_sync_dtype bf16, selective "
                           "recompute), distributed_fused_adam with param remainders",
                           kLauncher2407);
  } else {
    s.source = fmt::format("{}: conf/training/nemotron/*.yaml (fp32 grad sync), distributed_fused_adam with param "
                           "remainders",
                           kLauncher2407);
  }
  return s;
}

}  // namespace

SubmissionSettings submission_settings(const std::string& id) {
  // MLPerf Training v3.1, NVIDIA's GPT-3 175B on Eos (github.com/mlcommons/training_results_v3.1,
  // NVIDIA/benchmarks/gpt3/implementations/pytorch at f33f944):
  // - config_DGXH100_1344x8x8x4x8_mbs1.sh: MICRO_BATCH_SIZE=1 (after config_common.sh's 2), TP 4, PP 8;
  // - conf/custom.yaml: virtual_pipeline_model_parallel_size = INTERLEAVED_PIPELINE, default 12, which no
  //   config file of the submission sets;
  // - config_common.sh USE_DIST_OPTIMIZER=True → run_and_time.sh picks optim/distributed_fused_adam.yaml:
  //   grad_sync_dtype bf16, overlap_grad_sync and overlap_param_sync True.
  if (starts_with(id, "mlperf-v3.1-nvidia-eos-gpt3")) {
    SubmissionSettings s;
    s.vpp = 12;
    s.micro_batch = 1;
    s.grad_reduce_in_fp32 = false;
    s.source = "MLPerf Training v3.1 NVIDIA GPT-3 config (custom.yaml, config_DGXH100_1344x8x8x4x8_mbs1.sh)";
    return s;
  }
  if (starts_with(id, "nemo2407-")) return nemo2407(id);
  if (starts_with(id, "nemo-longseq-")) {
    SubmissionSettings s;
    s.store_param_remainders = true;
    s.source = fmt::format("{}: conf/training/llama/llama2_7b.yaml (fp32 grad sync), distributed_fused_adam with "
                           "param remainders",
                           kLauncher240301);
    return s;
  }
  return {};
}

double published_hidden_dropout(const std::string& model_name) {
  std::string name = model_name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Megatron-LM's --hidden-dropout default and NeMo's conf/training/gpt3/*.yaml hidden_dropout: 0.1;
  // the GPT-shaped benchmark models of Narayanan 2021, Korthikanti 2022 and Megatron-Core's weak
  // scaling ran with it. NeMo's llama and nemotron configs, Megatron-Bridge's Llama and Qwen providers
  // and the HF modelling code of Llama, Mixtral and Qwen train without.
  return starts_with(name, "gpt") ? 0.1 : 0.0;
}

}  // namespace moesim::config
