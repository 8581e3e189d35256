#!/bin/sh
# Without a CUDA device, moesim-validate-run must exit 2 with "moesim-validate-run: no CUDA device
# found" on stderr and write nothing (after reading the workload: a bad one is refused first). On a
# machine with a GPU this reports skipped (77): a real run is calibrate/device_check.sh's job.
# Usage: validate_run_no_gpu.sh MOESIM_VALIDATE_RUN WORKLOAD SCRATCH_DIR
# WORKLOAD is calibrate/tests/data/smoke-gqa-workload.json, which tests/cli keeps equal to what
# `moesim validate calibrate/tests/smoke/gqa-h200.json ... --workload` writes today.
runner=$1
workload=$2
dir=$3
if nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: a CUDA device is present"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 1
err=$("$runner" --workload "$workload" --out "$dir/measured.json" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 2 ]; then echo "FAIL: exit code $rc, expected 2 (stderr: $err)"; exit 1; fi
if [ "$err" != "moesim-validate-run: no CUDA device found" ]; then echo "FAIL: stderr was: $err"; exit 1; fi
if [ -e "$dir/measured.json" ]; then echo "FAIL: measured.json was written"; exit 1; fi
if ls "$dir" | grep -q "measured.json.*tmp"; then echo "FAIL: a temporary file was left"; exit 1; fi
# A broken workload is refused before anything else, with its file and path.
sed 's/"hidden": 1024/"hidden": -1/' "$workload" > "$dir/broken.json"
err=$("$runner" --workload "$dir/broken.json" --out "$dir/measured.json" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 2 ]; then echo "FAIL: broken workload: exit code $rc, expected 2 (stderr: $err)"; exit 1; fi
case "$err" in *broken.json*/hidden*) ;; *) echo "FAIL: broken workload: stderr was: $err"; exit 1 ;; esac
# A watchdog outside 1 s .. 1 day is bad usage, refused before any device is looked for.
for t in 0 86401 soon; do
  err=$("$runner" --workload "$workload" --out "$dir/measured.json" --timeout-s "$t" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL: --timeout-s $t: exit code $rc, expected 2 (stderr: $err)"; exit 1; fi
  case "$err" in *--timeout-s*) ;; *) echo "FAIL: --timeout-s $t: stderr was: $err"; exit 1 ;; esac
done
if [ -e "$dir/measured.json" ]; then echo "FAIL: measured.json was written"; exit 1; fi
echo "ok: exit 2, \"moesim-validate-run: no CUDA device found\", nothing written; a broken workload and --timeout-s 0 / 86401 / soon refused"
