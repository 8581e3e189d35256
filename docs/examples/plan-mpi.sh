#!/usr/bin/env bash
# One shard of a large `moesim plan` sweep per MPI rank (no MPI library needed: the launcher only
# starts the processes and tells each its rank), then rank 0's caller merges:
#   mpirun -n 8 bash docs/examples/plan-mpi.sh
#   build/moesim merge plan-shards/shard-*.json --json plan.json --html plan.html
set -euo pipefail
# Open MPI, MPICH/Hydra and Slurm's srun each export the rank and size under their own names.
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:?start under mpirun or srun}}}
size=${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-${SLURM_NTASKS:?start under mpirun or srun}}}
moesim=${MOESIM:-build/moesim}
out=${PLAN_SHARD_DIR:-plan-shards}
mkdir -p "$out"
"$moesim" plan --model "${PLAN_MODEL:-deepseek-v3}" --system "${PLAN_SYSTEM:-hgx-h100}" --gpus "${PLAN_GPUS:-1024}" \
  --seq "${PLAN_SEQ:-4096}" --global-batch "${PLAN_GLOBAL_BATCH:-8192}" ${PLAN_EXTRA:-} \
  --threads "${PLAN_THREADS:-0}" --shard "$rank/$size" --json "$out/shard-$rank.json"
