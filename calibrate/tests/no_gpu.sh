#!/bin/sh
# Without a CUDA device, moesim-calibrate must exit 2 with "moesim-calibrate: no CUDA device found"
# on stderr and write nothing. On a machine with a GPU this reports skipped (77): a real run is
# calibrate/device_check.sh's job.
# Usage: no_gpu.sh MOESIM_CALIBRATE OUT_JSON
exe=$1
out=$2
if "$exe" --list-devices >/dev/null 2>&1; then
  echo "skipped: a CUDA device is present"
  exit 77
fi
rm -f "$out"
err=$("$exe" --out "$out" --quick 2>&1 >/dev/null)
rc=$?
if [ "$rc" -ne 2 ]; then echo "FAIL: exit code $rc, expected 2 (stderr: $err)"; exit 1; fi
if [ "$err" != "moesim-calibrate: no CUDA device found" ]; then echo "FAIL: stderr was: $err"; exit 1; fi
if [ -e "$out" ]; then echo "FAIL: $out was written"; exit 1; fi
if ls "$(dirname "$out")" | grep -q "$(basename "$out").*tmp"; then echo "FAIL: a temporary file was left"; exit 1; fi
echo "ok: exit 2, \"$err\", nothing written"
