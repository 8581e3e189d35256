#!/bin/sh
# Without a CUDA device, moesim-validate-run must exit 2 with "moesim-validate-run: no CUDA device
# found" on stderr and write nothing (after reading a valid workload: a bad one is refused first). On a
# machine with a GPU this reports skipped (77): a real run is calibrate/device_check.sh's job.
# Usage: validate_run_no_gpu.sh MOESIM_VALIDATE_RUN MOESIM SCRATCH_DIR
runner=$1
moesim=$2
dir=$3
if nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: a CUDA device is present"
  exit 77
fi
rm -rf "$dir" && mkdir -p "$dir" || exit 1
"$moesim" validate mixtral-8x7b-h100-64 --gpus 1 --layers 1 --workload "$dir/workload.json" >/dev/null || {
  echo "FAIL: moesim validate --workload did not write the workload"; exit 1; }
# The smoke scenarios device_check.sh runs under compute-sanitizer must keep producing workloads.
here=$(dirname "$0")
for smoke in gqa mla; do
  "$moesim" validate "$here/smoke/$smoke-h200.json" --gpus 1 --steps 1 --warmup 1 --workload "$dir/smoke-$smoke.json" \
    >/dev/null || { echo "FAIL: no workload from smoke/$smoke-h200.json"; exit 1; }
done
err=$("$runner" --workload "$dir/workload.json" --out "$dir/measured.json" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 2 ]; then echo "FAIL: exit code $rc, expected 2 (stderr: $err)"; exit 1; fi
if [ "$err" != "moesim-validate-run: no CUDA device found" ]; then echo "FAIL: stderr was: $err"; exit 1; fi
if [ -e "$dir/measured.json" ]; then echo "FAIL: measured.json was written"; exit 1; fi
if ls "$dir" | grep -q "measured.json.*tmp"; then echo "FAIL: a temporary file was left"; exit 1; fi
echo "ok: exit 2, \"$err\", nothing written"
