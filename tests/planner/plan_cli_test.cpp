// `moesim plan` and `moesim merge` end to end: the table and explanations, byte-identical reruns,
// shards + merge = one process, the infeasible exit code 3, bad options.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../run_command.hpp"
#include "../test_paths.hpp"

using namespace moesim;
namespace fs = std::filesystem;

namespace {

const std::string kQuestion = " plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --finalists 3 --top 5";

fs::path scratch(const std::string& name) { return test::binary_dir() / ("plan-" + std::to_string(::getpid()) + "-" + name); }

test::CommandResult run_moesim(const std::string& args) {
  return test::run_command(test::moesim_binary() + args, test::source_dir().string());
}

/// The one-process plan of kQuestion, run once per test binary: what it prints and the JSON it writes
/// (the table test reads the first; the shard and script tests compare their merges with the second).
struct OneProcessPlan {
  std::string printed, json;
};
const OneProcessPlan& one_process_plan() {
  static const OneProcessPlan plan = [] {
    const fs::path file = scratch("one-process.json");
    const auto r = run_moesim(kQuestion + " --json '" + file.string() + "'");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    OneProcessPlan out{r.out, test::slurp(file.string())};
    fs::remove(file);
    return out;
  }();
  return plan;
}

}  // namespace

TEST_CASE("plan prints the ranked table, the explanation, the rejections, the precision advice and skew") {
  const auto& r = one_process_plan();
  for (const char* part : {"rank  layout", "why:", "Winner:", "It beats the runner-up", "rejected (count",
                           "out of memory on stage", "precision advice", "routing-skew sensitivity", "held fixed:"}) {
    CHECK_MESSAGE(r.printed.find(part) != std::string::npos, part);
  }
}

TEST_CASE("issue 7 must-show 3: re-running gives byte-identical JSON; shards + merge give the same plan") {
  const fs::path b = scratch("b.json"), m = scratch("merged.json"), html = scratch("m.html");
  REQUIRE(run_moesim(kQuestion + " -q --threads 1 --json '" + b.string() + "'").exit_code == 0);
  const std::string& one = one_process_plan().json;
  CHECK(one == test::slurp(b.string()));
  std::string shard_files;
  for (int k = 0; k < 3; ++k) {
    const fs::path s = scratch("shard" + std::to_string(k) + ".json");
    const auto r = run_moesim(kQuestion + " --shard " + std::to_string(k) + "/3 --json '" + s.string() + "'");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    shard_files += " '" + s.string() + "'";
  }
  const auto merged = run_moesim(" merge" + shard_files + " -q --json '" + m.string() + "' --html '" + html.string() + "'");
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
  CHECK(test::slurp(m.string()) == one);
  const auto plan = nlohmann::json::parse(one);
  CHECK(plan.at("schema") == "moesim.plan/1");
  CHECK(plan.at("ranked").size() == 5);
  CHECK(plan.at("ranked").at(0).at("fidelity") == "simulation");
  CHECK(plan.at("search").at("considered").get<int>() > 1000);
  const std::string page = test::slurp(html.string());
  for (const char* id : {"id=\"summary\"", "id=\"ranked\"", "id=\"breakdown-chart\"", "id=\"memory-chart\"",
                         "id=\"pareto-chart\"", "id=\"plan-data\""}) {
    CHECK_MESSAGE(page.find(id) != std::string::npos, id);
  }
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);

  // A missing shard and a shard of another question are refused.
  const auto missing = run_moesim(" merge '" + scratch("shard0.json").string() + "' '" + scratch("shard1.json").string() + "'");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("shard missing from the merge") != std::string::npos);
  const fs::path other = scratch("other.json");
  REQUIRE(run_moesim(kQuestion + " --micro-batch 1 --shard 2/3 --json '" + other.string() + "'").exit_code == 0);
  const auto mixed = run_moesim(" merge '" + scratch("shard0.json").string() + "' '" + scratch("shard1.json").string() + "' '" +
                            other.string() + "'");
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("different plan request") != std::string::npos);
  for (const auto& f : {b, m, html, other, scratch("shard0.json"), scratch("shard1.json"), scratch("shard2.json")}) fs::remove(f);
}

TEST_CASE("issue 7 must-show 4: no feasible layout says why and exits 3") {
  const auto r = run_moesim(" plan --model deepseek-v3 --system hgx-h100 --gpus 8 --seq 4096 --global-batch 64 --no-skew");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("no feasible layout among") != std::string::npos);
  CHECK(r.err.find("needs more than the 80.0 GiB per GPU of h100-sxm") != std::string::npos);
  CHECK(r.err.find("the smallest needs") != std::string::npos);
  CHECK(r.err.find("more GPUs than 8") != std::string::npos);
  // Constraining recompute leaves full recompute as an untried way out, and the message says so.
  const auto c = run_moesim(" plan --model deepseek-v3 --system hgx-h100 --gpus 8 --seq 4096 --global-batch 64 --recompute none --pp 1,2");
  CHECK(c.exit_code == 3);
  CHECK(c.err.find("recompute=full (not searched)") != std::string::npos);
  CHECK(c.err.find("pp > 2 (the largest searched)") != std::string::npos);
}

// Issue 33: PP8 VPP2 with 12 micro-batches was a finalist whose simulation stalled (exit 1). It is
// now rejected by the layout rule, as Megatron-Core refuses it, and the plan ranks the rest.
TEST_CASE("issue 33: a plan over PP8 VPP 1,2 with 12 micro-batches ranks VPP1 and names the rule for VPP2") {
  const auto r = run_moesim(" plan --model llama-3-8b --system hgx-h100 --gpus 8 --seq 4096 --global-batch 12 --pp 8 "
                            "--vpp 1,2 --micro-batch 1 --finalists 4 --top 4 --no-skew");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("layout rule at /parallel/vpp") != std::string::npos);
  CHECK(r.out.find("to be a multiple of pp (8)") != std::string::npos);
}

TEST_CASE("a plan over a GPU range reports a Pareto front across GPU counts") {
  const auto r = run_moesim(" plan --model mixtral-8x7b --system hgx-h100 --gpus 32:128 --seq 4096 --global-batch 256 "
                        "--objective tokens-per-gpu-hour --finalists 2 --top 3 --no-skew --micro-batch 1 --recompute none,full");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("Pareto front over (tokens/s, memory headroom, GPUs)") != std::string::npos);
  CHECK(r.out.find("    32 GPUs") != std::string::npos);
  CHECK(r.out.find("   128 GPUs") != std::string::npos);
}

TEST_CASE("plan on a scenario: its layout fields become constraints") {
  const auto r = run_moesim(" plan mixtral-8x7b-h100-64 --no-skew --finalists 1 --top 1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // The built-in scenario fixes everything but nothing else: one candidate, its own layout.
  CHECK(r.out.find("searched 1 candidates") != std::string::npos);
  CHECK(r.out.find("TP1 PP4 VPP8 EP8 DP16") != std::string::npos);
}

TEST_CASE("bad plan options: one clear error, exit 2") {
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --shard 3/3 --json x.json",
       "moesim: error: at --shard: value 3/3: expected i/N with 0 <= i < N <= 100000; allowed: 0/N … N-1/N"},
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64:32 --seq 4096 --global-batch 256",
       "moesim: error: at --gpus: value 64:32: FROM must not exceed TO; allowed: N, N1,N2,..., or FROM:TO (doubling from FROM up to TO)"},
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --precision fp7",
       "moesim: error: at --precision: value fp7: unknown precision 'fp7'; allowed: bf16, fp16, fp8, fp8-blockwise, mxfp8, nvfp4, or all"},
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --recompute partial",
       "moesim: error: at --recompute: value partial: unknown recompute option 'partial'; allowed: none, selective, full, "
       "selective:MODULE+MODULE (core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts)"},
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --recompute selective:attn",
       "moesim: error: at --recompute: value selective:attn: unknown recompute module 'attn'; allowed: none, selective, "
       "full, selective:MODULE+MODULE (core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts)"},
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --dispatcher deepep,nccl",
       "moesim: error: at --dispatcher: value deepep,nccl: unknown dispatcher 'nccl'; allowed: alltoall, allgather, "
       "deepep, hybridep"},
      {" plan mixtral-8x7b-h100-64 --model mixtral-8x7b",
       "moesim: error: at --model/--system/--seq/--global-batch: value mixtral-8x7b-h100-64: give either a scenario or "
       "--model, --system, --gpus, --seq and --global-batch, not both; allowed: moesim plan SCENARIO [--gpus N], or "
       "moesim plan --model M --system S --gpus N --seq L --global-batch B"},
      {" plan --model mixtral-9x9b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256", "unknown model preset"},
      {" plan --model mixtral-8x7b --system hgx-h100 --gpus 64 --seq 4096 --global-batch 256 --objective time-to-tokens",
       "objective time-to-tokens needs a token budget"},
      {" plan mixtral-8x7b-h100-64 --memory-headroom -1",
       "moesim: error: at --memory-headroom: value -1: out of range; allowed: numbers from 0 to 1024"},
      {" plan mixtral-8x7b-h100-64 --memory-headroom nan",
       "moesim: error: at --memory-headroom: value nan: not a finite number; allowed: numbers from 0 to 1024"},
      {" plan mixtral-8x7b-h100-64 --redundant-experts 1",
       "moesim: error: at /space/redundant_experts_per_rank: value [1]: redundant experts need the scenario's "
       "moe.placement.strategy \"eplb\" (it places contiguously); allowed: [0], or set moe.placement.strategy to "
       "\"eplb\""},
      {" plan mixtral-8x7b-h100-64 --redundant-experts -1",
       "moesim: error: at --redundant-experts: value -1: '-1' is not an integer from 0 to 65536"},
  };
  for (const auto& c : cases) {
    const auto r = run_moesim(c.args);
    CHECK_MESSAGE(r.exit_code == 2, c.args);
    CHECK_MESSAGE(r.err.find(c.message) != std::string::npos, c.args, "\n", r.err);
  }
}

TEST_CASE("the Slurm and MPI example scripts shard a plan that moesim merge joins into the one-process plan") {
  const fs::path dir = scratch("shards"), merged = scratch("scripts-merged.json");
  const std::string env = "MOESIM='" + test::moesim_binary() + "' PLAN_MODEL=mixtral-8x7b PLAN_SYSTEM=hgx-h100 PLAN_GPUS=64 "
                          "PLAN_SEQ=4096 PLAN_GLOBAL_BATCH=256 PLAN_EXTRA='--finalists 3 --top 5' PLAN_SHARD_DIR='" +
                          dir.string() + "' ";
  for (const char* script : {"plan-slurm.sh", "plan-mpi.sh"}) {
    fs::remove_all(dir);
    for (int k = 0; k < 3; ++k) {
      const std::string ids = std::string(script) == "plan-slurm.sh"
                                  ? "SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " SLURM_ARRAY_TASK_COUNT=3 SLURM_CPUS_PER_TASK=1 "
                                  : "OMPI_COMM_WORLD_RANK=" + std::to_string(k) + " OMPI_COMM_WORLD_SIZE=3 ";
      const auto r = test::run_command(env + ids + "bash docs/examples/" + script + " >/dev/null", test::source_dir().string());
      REQUIRE_MESSAGE(r.exit_code == 0, script, r.err);
    }
    const auto m = test::run_command(test::moesim_binary() + " merge '" + dir.string() + "'/shard-*.json -q --json '" +
                                         merged.string() + "'",
                                     test::source_dir().string());
    REQUIRE_MESSAGE(m.exit_code == 0, m.err);
    CHECK_MESSAGE(test::slurp(merged.string()) == one_process_plan().json, script);
  }
  fs::remove_all(dir);
  fs::remove(merged);
}

TEST_CASE("merge refuses a file that is not a plan shard, with the exact message and exit 2") {
  struct Case {
    std::string name, text, message;
  };
  const Case cases[] = {
      {"bad-shard.json", R"({"schema":"moesim.plan-shard/1","search":{},"bogus":1})",
       "bad-shard.json: at /bogus: unknown key 'bogus'; allowed: moesim_version, request, schema, search"},
      {"not-shard.json", R"({"schema":"moesim.result/1"})",
       "not-shard.json: at /schema: value \"moesim.result/1\": this is a result (moesim.result/1), not a plan shard "
       "(written by moesim plan --shard i/N "
       "--json FILE); allowed: moesim.plan-shard/1"},
  };
  const fs::path dir = scratch("bad-shards");
  fs::create_directories(dir);
  for (const auto& c : cases) {
    {
      std::ofstream(dir / c.name) << c.text;
    }
    const auto r = test::run_command(test::moesim_binary() + " merge " + c.name, dir.string());
    CHECK(r.exit_code == 2);
    CHECK(r.err == "moesim: error: " + c.message + "\n");
  }
  fs::remove_all(dir);
}
