#!/usr/bin/env bash
# One shard of a large `moesim plan` sweep per Slurm array task; the last step merges them.
#   sbatch --array=0-7 docs/examples/plan-slurm.sh        # 8 shards, one per array task
#   build/moesim merge plan-shards/shard-*.json --json plan.json --html plan.html
# Every task runs the same question; only --shard differs. Each shard uses all the cores Slurm gives it.
#SBATCH --job-name=moesim-plan
#SBATCH --cpus-per-task=16
#SBATCH --time=00:30:00
set -euo pipefail
task=${SLURM_ARRAY_TASK_ID:?run as a Slurm array job (sbatch --array=0-N)}
count=${SLURM_ARRAY_TASK_COUNT:?run as a Slurm array job (sbatch --array=0-N)}
moesim=${MOESIM:-build/moesim}
out=${PLAN_SHARD_DIR:-plan-shards}
mkdir -p "$out"
"$moesim" plan --model "${PLAN_MODEL:-deepseek-v3}" --system "${PLAN_SYSTEM:-hgx-h100}" --gpus "${PLAN_GPUS:-1024}" \
  --seq "${PLAN_SEQ:-4096}" --global-batch "${PLAN_GLOBAL_BATCH:-8192}" ${PLAN_EXTRA:-} \
  --threads "${SLURM_CPUS_PER_TASK:-0}" --shard "$task/$count" --json "$out/shard-$task.json"
