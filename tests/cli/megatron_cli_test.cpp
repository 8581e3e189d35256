// `moesim plan --emit megatron|bridge` and `moesim scenario from-megatron` through the binary (issue 31,
// must-show 4): the winner's Megatron-LM arguments name its layout and batch, and reading them back
// predicts the same step as the plan's winner.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {
const std::string kMoesim = test::moesim_binary();

fs::path work_dir() {
  const fs::path d = test::binary_dir() / "megatron-cli";
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST_CASE("plan --emit megatron prints the winner's layout, batch and MoE flags; from-megatron gives the same run back") {
  const fs::path d = work_dir();
  const auto emitted = test::run_command(kMoesim + " plan mixtral-8x7b-h100-64 --no-skew --emit megatron", d.string());
  REQUIRE_MESSAGE(emitted.exit_code == 0, emitted.err);
  for (const char* flag : {"--tensor-model-parallel-size 1", "--pipeline-model-parallel-size 4",
                           "--num-virtual-stages-per-pipeline-rank 8", "--expert-model-parallel-size 8",
                           "--expert-tensor-parallel-size 1", "--num-experts 8", "--moe-router-topk 2",
                           "--micro-batch-size 1", "--global-batch-size 256", "--seq-length 4096",
                           "--moe-token-dispatcher-type alltoall", "--bf16", "--use-distributed-optimizer"}) {
    const bool found = emitted.out.find(std::string(flag) + " \\\n") != std::string::npos ||
                       emitted.out.find(std::string(flag) + "\n") != std::string::npos;
    CHECK_MESSAGE(found, flag, " missing from:\n", emitted.out);
  }
  std::ofstream(d / "args.sh") << emitted.out;
  const auto plan = test::run_command(kMoesim + " plan mixtral-8x7b-h100-64 --no-skew -q --json plan.json", d.string());
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.err);
  const auto back = test::run_command(
      kMoesim + " scenario from-megatron args.sh --system hgx-h100:64 -o back.json && " + kMoesim +
          " simulate back.json -q --json back-result.json",
      d.string());
  REQUIRE_MESSAGE(back.exit_code == 0, back.err);
  const auto winner = nlohmann::json::parse(test::slurp((d / "plan.json").string()))["winner"];
  const auto result = nlohmann::json::parse(test::slurp((d / "back-result.json").string()));
  CHECK(result["fidelity"] == winner["fidelity"]);
  CHECK(result["step_time_s"] == winner["step_time_s"]);
  CHECK(result["memory"]["peak_bytes"] == winner["memory"]["peak_bytes"]);
  for (const char* key : {"parallel", "training", "precision", "recompute", "optimizer", "runtime", "offload"}) {
    CAPTURE(key);
    CHECK(result["scenario"][key] == winner["scenario"][key]);
  }
}

TEST_CASE("plan --emit bridge prints Megatron-Bridge overrides; a bad --emit or --system is refused") {
  const fs::path d = work_dir();
  const auto bridge = test::run_command(kMoesim + " plan mixtral-8x7b-h100-64 --no-skew --emit bridge", d.string());
  REQUIRE_MESSAGE(bridge.exit_code == 0, bridge.err);
  CHECK(bridge.out.find("model.expert_model_parallel_size=8\n") != std::string::npos);
  CHECK(bridge.out.find("train.global_batch_size=256\n") != std::string::npos);
  CHECK(bridge.out.find("mixed_precision=bf16_mixed\n") != std::string::npos);
  const auto bad = test::run_command(kMoesim + " plan mixtral-8x7b-h100-64 --emit nemo", d.string());
  CHECK(bad.exit_code == 2);
  std::ofstream(d / "empty.sh") << "--num-layers 2\n";
  const auto bad_system = test::run_command(kMoesim + " scenario from-megatron empty.sh --system hgx-h100", d.string());
  CHECK(bad_system.exit_code == 2);
  CHECK(bad_system.err.find("--system") != std::string::npos);
}

TEST_CASE("a what-if plan's winner carries the prediction as asked beside it") {
  const fs::path d = work_dir();
  const auto plan = test::run_command(kMoesim + " plan " + (test::source_dir() / "docs" / "scenarios" /
                                                            "mixtral-whatif-expert-mlp-2x.json").string() +
                                          " --no-skew -q --json whatif-plan.json",
                                      d.string());
  REQUIRE_MESSAGE(plan.exit_code == 0, plan.err);
  const auto winner = nlohmann::json::parse(test::slurp((d / "whatif-plan.json").string()))["winner"];
  REQUIRE(winner.contains("whatif"));
  CHECK(winner["whatif"]["kernel_speedup"]["expert_mlp"] == 2.0);
  CHECK(winner["whatif"]["baseline"]["step_time_s"].get<double>() > winner["step_time_s"].get<double>());
}
