#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD_DIR (configured with -DMOESIM_FUZZ=ON) for SECONDS from the
# checked-in corpus, with a dictionary of the JSON keys its corpus uses and inputs up to 1 MiB (the
# corpus holds a 200 KB deep-nesting seed per target). The corpus in fuzz/corpus is read, never
# written: new inputs go to a scratch folder. A crash, hang (> 10 s for one input), leak or
# out-of-memory (> 2 GiB) stops the run; its input is saved under fuzz-artifacts/TARGET/ and the
# script fails, printing how to turn it into a regression input (fuzz/README.md). Targets run
# FUZZ_JOBS at a time (default: one per core), each for the full SECONDS.
#   usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$1
seconds=$2
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(scenario model topology routing_histogram report plan_shard profile validation_workload)
fi
jobs=${FUZZ_JOBS:-$(nproc)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for t in "${targets[@]}"; do
  [ -x "$build/fuzz/fuzz_$t" ] || { echo "fuzz: $build/fuzz/fuzz_$t is missing (configure with -DMOESIM_FUZZ=ON)"; exit 2; }
done

fuzz_one() {
  local t=$1
  mkdir -p "$scratch/$t" "fuzz-artifacts/$t"
  # Every quoted token of the corpus (keys, enum values) as a libFuzzer dictionary entry.
  grep -rhoE '"[A-Za-z0-9_./:+-]{1,40}"' "fuzz/corpus/$t" | sort -u | sed 's/"/\\"/g; s/.*/"&"/' > "$scratch/$t.dict" || true
  if "$build/fuzz/fuzz_$t" "$scratch/$t" "fuzz/corpus/$t" "fuzz/regressions/$t" \
      -dict="$scratch/$t.dict" -max_len=1048576 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=2048 -seed=1 -print_final_stats=1 -artifact_prefix="fuzz-artifacts/$t/" \
      > "$scratch/$t.log" 2>&1; then
    touch "$scratch/$t.ok"
  fi
}

running=0
for t in "${targets[@]}"; do
  echo "fuzz: $t for ${seconds} s"
  fuzz_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

failed=()
for t in "${targets[@]}"; do
  if [ -e "$scratch/$t.ok" ]; then
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" "$scratch/$t.log" | sed "s/^/  $t: /" || true
  else
    tail -n 60 "$scratch/$t.log"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]} — the inputs are in fuzz-artifacts/; add each to fuzz/regressions/TARGET/ and tests/invalid/ once fixed"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets, ${seconds} s each, ${jobs} at a time, no crash, hang, leak or improper refusal"
