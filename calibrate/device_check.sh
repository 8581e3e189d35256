#!/usr/bin/env bash
# One prepared run on a lent GPU machine (an H200 here), in the repository root:
#   1. unpack the carried header-only dependencies (.deps/debs, from calibrate/fetch_deps.sh),
#   2. find NCCL and cuBLAS wherever that image keeps them,
#   3. configure and build only the CUDA targets (sm_90, tests on, bench off),
#   4. run the GPU correctness tests (every one must pass),
#   5. run `moesim-calibrate --quick` and print the efficiency summary,
#   6. run `moesim validate` on the three validation scenarios of docs/validation.md (issue 10): the
#      proxy runner measures, the simulator predicts with the profile of step 5, the error is printed.
# Everything worth keeping lands in $OUT (the device tool brings it back): h200-quick.json,
# calibrate.log, gpu-tests.log, build.log, summary.txt, validation-*.{json,html,log}.
# DEVICE_CHECK_STEPS picks the steps after the build (default "tests calibrate validate"); without
# "calibrate", validate predicts with the checked-in profile calibrate/profiles/h200-quick.json when
# there is one, else with the GPU preset.
#
# Through the device tool (one call, well inside its 10 minutes):
#   run(command="bash calibrate/device_check.sh", carry=[".deps/debs"], timeout_s=600)
# Elsewhere: OUT=/some/folder bash calibrate/device_check.sh
# DEVICE_CHECK_CONFIGURE_ONLY=1 stops after the configure step (to check the flags without a GPU).
# Exit status: 0 when the build, every GPU test, the calibration, the smoke runs and the three
# validations (within their bounds) succeeded; 1 otherwise (the later steps still run, so one call
# brings back everything there is).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
BUILD=${BUILD:-build-device}
JOBS=$(nproc 2>/dev/null || echo 8)
status=0
started=$SECONDS
step() { echo; echo "== [$((SECONDS - started)) s] $*"; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,memory.total --format=csv 2>&1 | head -5
echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"; echo "cmake: $(cmake --version | head -1)"; echo "ninja: $(ninja --version 2>&1)"
echo "c++: $(c++ --version 2>/dev/null | head -1)"

step "dependencies (.deps/debs -> .deps/root)"
DEPS=$PWD/.deps/root
if [ ! -d "$DEPS/usr/include/nlohmann" ] || [ ! -d "$DEPS/usr/include/boost" ]; then
  if ! ls .deps/debs/*.deb >/dev/null 2>&1; then
    echo "no .deps/debs/*.deb: run 'bash calibrate/fetch_deps.sh' on the development machine and carry .deps/debs"; exit 1
  fi
  mkdir -p "$DEPS"
  for deb in .deps/debs/*.deb; do dpkg-deb -x "$deb" "$DEPS" || { echo "cannot unpack $deb"; exit 1; }; done
fi
ARCH_LIB=$DEPS/usr/lib/x86_64-linux-gnu
DEP_HINTS=(-DCMAKE_PREFIX_PATH="$DEPS/usr"
           -Dfmt_DIR="$ARCH_LIB/cmake/fmt"
           -Dnlohmann_json_DIR="$DEPS/usr/share/cmake/nlohmann_json"
           -DCLI11_DIR="$DEPS/usr/share/cmake/CLI11"
           -Ddoctest_DIR="$DEPS/usr/lib/cmake/doctest"
           -DBoost_DIR="$(ls -d "$ARCH_LIB"/cmake/Boost-* | head -1)")
echo "${DEP_HINTS[@]}"

# A library found only as name.so.N (pip wheels ship no unversioned link) gets a shim folder with
# both names, so that find_library and the loader see it.
SHIM=/tmp/moesim-shim
mkdir -p "$SHIM/include" "$SHIM/lib"
PY_SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || true)
find_first() {  # find_first NAME DIR...: the first DIR/NAME that exists
  local name=$1; shift
  for d in "$@"; do [ -e "$d/$name" ] && { echo "$d/$name"; return 0; }; done
  return 1
}
shim_lib() {  # shim_lib NAME SONAME DIR...: prints the path to link against
  local name=$1 soname=$2; shift 2
  local found
  if found=$(find_first "lib$name.so" "$@"); then echo "$found"; return 0; fi
  if found=$(find_first "lib$name.so.$soname" "$@"); then
    ln -sf "$found" "$SHIM/lib/lib$name.so"; ln -sf "$found" "$SHIM/lib/lib$name.so.$soname"
    echo "$SHIM/lib/lib$name.so"; return 0
  fi
  return 1
}
LIB_DIRS=(${NCCL_HOME:+$NCCL_HOME/lib} ${NCCL_HOME:+$NCCL_HOME/lib64} /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib
          /usr/lib/x86_64-linux-gnu ${PY_SITE:+$PY_SITE/nvidia/nccl/lib} ${PY_SITE:+$PY_SITE/nvidia/cublas/lib} ${PY_SITE:+$PY_SITE/nvidia/cu13/lib})
INC_DIRS=(${NCCL_HOME:+$NCCL_HOME/include} /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include /usr/include
          ${PY_SITE:+$PY_SITE/nvidia/nccl/include} ${PY_SITE:+$PY_SITE/nvidia/cublas/include} ${PY_SITE:+$PY_SITE/nvidia/cu13/include})
NCCL_LIB=$(shim_lib nccl 2 "${LIB_DIRS[@]}") || { echo "libnccl not found in: ${LIB_DIRS[*]}"; exit 1; }
NCCL_H=$(find_first nccl.h "${INC_DIRS[@]}") || { echo "nccl.h not found in: ${INC_DIRS[*]}"; exit 1; }
echo "NCCL: $NCCL_H, $NCCL_LIB"
EXTRA=()
if [ ! -e /usr/local/cuda/lib64/libcublasLt.so ] && [ ! -e /usr/local/cuda/targets/x86_64-linux/lib/libcublasLt.so ]; then
  # cuBLAS outside the toolkit (a pip wheel): link names in the shim, headers on the include path.
  shim_lib cublas 13 "${LIB_DIRS[@]}" >/dev/null && shim_lib cublasLt 13 "${LIB_DIRS[@]}" >/dev/null || { echo "cuBLAS not found"; exit 1; }
  CUBLAS_H=$(find_first cublasLt.h "${INC_DIRS[@]}") || { echo "cublasLt.h not found"; exit 1; }
  EXTRA+=(-DCMAKE_LIBRARY_PATH="$SHIM/lib" -DCMAKE_CXX_FLAGS="-I$(dirname "$CUBLAS_H")" -DCMAKE_CUDA_FLAGS="-I$(dirname "$CUBLAS_H")")
  echo "cuBLAS outside the toolkit: $(dirname "$CUBLAS_H"), libraries in $SHIM/lib"
fi
export LD_LIBRARY_PATH="$SHIM/lib:$(dirname "$NCCL_LIB"):$ARCH_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

step "configure ($BUILD)"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOESIM_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DMOESIM_BUILD_TESTS=ON -DMOESIM_BUILD_BENCH=OFF -DMOESIM_USE_NPM=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  -DMOESIM_NCCL_INCLUDE="$(dirname "$NCCL_H")" -DMOESIM_NCCL_LIBRARY="$NCCL_LIB" \
  "${DEP_HINTS[@]}" "${EXTRA[@]}" > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; echo "configure FAILED"; exit 1; }
grep -E "moesim:|CUDAToolkit|Boost|doctest" "$OUT/build.log" | head -10
if [ -n "${DEVICE_CHECK_CONFIGURE_ONLY:-}" ]; then echo "configured (DEVICE_CHECK_CONFIGURE_ONLY)"; exit 0; fi

step "build (-j$JOBS)"
STEPS=${DEVICE_CHECK_STEPS:-tests calibrate validate}
has_step() { [[ " $STEPS " == *" $1 "* ]]; }
TARGETS=(test_kernels test_gpu_gemm test_gpu_moe test_gpu_cast test_gpu_attention test_gpu_elementwise test_kernels_reference
         test_calibrate test_proxy_plan moesim-calibrate)
if has_step validate; then TARGETS+=(moesim moesim-validate-run); fi
if ! cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}" >> "$OUT/build.log" 2>&1; then
  grep -E "error|FAILED" "$OUT/build.log" | head -30; echo "build FAILED"; exit 1
fi
echo "built: ${TARGETS[*]}"

step "CPU references and host tests"
ctest --test-dir "$BUILD" -R '^(kernels_reference|calibrate|proxy_plan)$' --output-on-failure 2>&1 | tail -4 || status=1

if has_step tests; then
step "GPU correctness tests (label gpu)"
if ! ctest --test-dir "$BUILD" -L gpu -R '^gpu_(kernels|gemm|moe|cast|attention|elementwise)$' -V --timeout 300 > "$OUT/gpu-tests.log" 2>&1; then status=1; fi
grep -E "^[0-9]+: (ok|FAIL|  )|tests passed|tests failed|Skipped|Failed|\(Failed\)|Passed" "$OUT/gpu-tests.log" | sed 's/^[0-9]*: //' | tail -60
fi

if has_step calibrate; then
step "moesim-calibrate --quick"
REQUEST=()
if has_step validate; then
  # The validation proxies' own kernel shapes on top of the generic quick grid, so that their
  # predictions use kernels measured at those shapes (moesim validate --calibration-request).
  while IFS='|' read -r name scenario extra; do
    # shellcheck disable=SC2086
    "$BUILD/moesim" validate "$scenario" --gpus 1 $extra --calibration-request "$OUT/request-$name.json" > /dev/null ||
      echo "no calibration request from $scenario"
  done <<'RUNS'
mixtral|docs/scenarios/validation/mixtral-8x7b-h200.json|--layers 3
deepseek-v3|docs/scenarios/validation/deepseek-v3-h200.json|--layers 3 --experts 32
deepseek-v3-lognormal|docs/scenarios/validation/deepseek-v3-lognormal-h200.json|--layers 3 --experts 32
RUNS
  python3 - "$OUT/request.json" "$OUT"/request-*.json <<'PY' && REQUEST=(--request "$OUT/request.json")
import json, sys
merged = {"schema": "moesim.calibration-request/1"}
for path in sys.argv[2:]:
    for table, rows in json.load(open(path)).items():
        if table == "schema":
            continue
        seen = merged.setdefault(table, [])
        seen.extend(r for r in rows if r not in seen)
json.dump(merged, open(sys.argv[1], "w"), indent=1)
print("request: " + ", ".join(f"{t} {len(r)}" for t, r in merged.items() if t != "schema"))
PY
fi
timeout 360 "$BUILD/moesim-calibrate" --quick "${REQUEST[@]}" --out "$OUT/h200-quick.json" --log "$OUT/calibrate.log" \
  2> "$OUT/calibrate.stderr"
rc=$?
echo "moesim-calibrate exit code $rc"
[ $rc -eq 0 ] || status=1
tail -40 "$OUT/calibrate.stderr"

step "efficiency summary (from the profile)"
python3 - "$OUT/h200-quick.json" <<'PY' 2>&1 | tee "$OUT/summary.txt"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["schema"] == "moesim.profile/1", p["schema"]
for t in ("gemm", "grouped_gemm", "kernels", "attention", "collectives"):
    assert isinstance(p[t], list), t
pv = p["provenance"]
print(f"{pv['device_name']} ({pv['gpu']}), {pv['sm_count']} SMs, {pv['sm_clock_mhz']}/{pv['memory_clock_mhz']} MHz, driver {pv['driver']}, "
      f"CUDA {pv['cuda_runtime']}, cuBLAS {pv['cublas']}, NCCL {pv['nccl']}")
print("rows: " + ", ".join(f"{t} {len(p[t])}" for t in ("gemm", "grouped_gemm", "kernels", "attention", "collectives")))
gbps = lambda r: r["bytes"] / r["median_us"] / 1e3
big = {}
for r in p["kernels"]:
    if r["kernel"] not in big or r["bytes"] > big[r["kernel"]]["bytes"]:
        big[r["kernel"]] = r
copy = gbps(big["copy"]) if "copy" in big else 0
print(f"copy {big['copy']['shape']}: {copy:.0f} GB/s (read+written)" if copy else "copy: missing")
for k, target in (("permute", 80), ("unpermute", 80), ("router_softmax_topk", 50), ("router_sigmoid_topk", 50), ("cast_fp8", 0)):
    if k in big and copy:
        pct = 100 * gbps(big[k]) / copy
        verdict = "" if not target else (f" target >= {target}%: " + ("meets" if pct >= target else "BELOW"))
        print(f"{k} {big[k]['shape']}: {gbps(big[k]):.0f} GB/s = {pct:.1f}% of copy{verdict}")
for prec in ("bf16", "fp8", "mxfp8", "nvfp4"):
    rows = [r for r in p["gemm"] if r["precision"] == prec]
    if not rows:
        print(f"gemm {prec}: no rows (unsupported here or not measured)"); continue
    pct = sorted(((100 * r["best_algorithm_us"] / r["median_us"], r) for r in rows), key=lambda x: x[0])
    worst = pct[0][1]
    tf = max(2 * r["m"] * r["n"] * r["k"] / r["median_us"] / 1e6 for r in rows)
    target = " target >= 90%: " + ("meets" if pct[0][0] >= 90 else "BELOW") if prec == "bf16" else ""
    print(f"gemm {prec}: ours (heuristic#0) at {pct[0][0]:.1f}% of best at worst ({worst['m']}x{worst['n']}x{worst['k']}), "
          f"median {pct[len(pct)//2][0]:.1f}% over {len(rows)} shapes; peak {tf:.0f} TFLOP/s{target}")
for r in p["attention"]:
    print(f"attention {r['direction']} {r['batch_heads']}x{r['seq']}x{r['head_dim']}: {r['median_us']:.0f} us")
top = {}
for c in p["collectives"]:
    if c["op"] not in top or (c["ranks"], c["bytes"]) > (top[c["op"]]["ranks"], top[c["op"]]["bytes"]):
        top[c["op"]] = c
for op, c in top.items():
    print(f"nccl {op} {c['ranks']} rank(s) {c['bytes']} B: {c['median_us']:.1f} us, busbw {c['busbw_gbps']:.1f} GB/s")
PY
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if has_step validate; then
step "runner smoke tests: tiny GQA and MLA stacks under compute-sanitizer memcheck"
SANITIZER=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
for smoke in gqa mla; do
  "$BUILD/moesim" validate "calibrate/tests/smoke/$smoke-h200.json" --gpus 1 --steps 1 --warmup 1 \
    --workload "$OUT/smoke-$smoke.workload.json" > /dev/null || { echo "smoke $smoke: no workload"; status=1; continue; }
  timeout 240 ${SANITIZER:+$SANITIZER --error-exitcode 3 --print-limit 20} "$BUILD/moesim-validate-run" \
    --workload "$OUT/smoke-$smoke.workload.json" --out "$OUT/smoke-$smoke.measured.json" > "$OUT/smoke-$smoke.log" 2>&1
  rc=$?
  tail -15 "$OUT/smoke-$smoke.log"
  echo "smoke $smoke: exit code $rc${SANITIZER:+ (under compute-sanitizer)}"
  [ $rc -eq 0 ] || status=1
done

step "validation runs (moesim validate: the proxy measured here vs the simulator's prediction)"
PROFILE=""
for p in "$OUT/h200-quick.json" calibrate/profiles/h200-quick.json; do [ -s "$p" ] && { PROFILE=$(realpath "$p"); break; }; done
echo "prediction profile: ${PROFILE:-none, the figures of the GPU preset}"
# name | scenario | extra options: docs/validation.md's three must-show runs. Three layers each: about
# 85 and 95 GiB predicted, leaving the runner's working buffers room below the 140 GiB of an H200 (the
# default, the most layers the memory model fits, runs at its edge).
while IFS='|' read -r name scenario extra; do
  [ -n "$name" ] || continue
  scen="$OUT/validation-$name.scenario.json"
  python3 - "$scenario" "$scen" "$PROFILE" <<'PY' || { echo "cannot write $scen"; status=1; continue; }
import json, sys
s = json.load(open(sys.argv[1]))
if sys.argv[3]:
    s["system"]["profile"] = sys.argv[3]
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
  echo "-- $name: moesim validate $scenario --gpus 1 $extra --steps 10 --warmup 3"
  # shellcheck disable=SC2086
  timeout 240 "$BUILD/moesim" validate "$scen" --gpus 1 $extra --steps 10 --warmup 3 \
    --json "$OUT/validation-$name.json" --html "$OUT/validation-$name.html" > "$OUT/validation-$name.log" 2>&1
  rc=$?
  cat "$OUT/validation-$name.log" | tail -25
  echo "exit code $rc (0: compared, the verdict line says whether within the bounds; 1 or 2: could not run)"
  [ $rc -eq 0 ] || status=1
  grep -q "^verdict *within the bounds" "$OUT/validation-$name.log" || status=1
done <<'RUNS'
mixtral|docs/scenarios/validation/mixtral-8x7b-h200.json|--layers 3
deepseek-v3|docs/scenarios/validation/deepseek-v3-h200.json|--layers 3 --experts 32
deepseek-v3-lognormal|docs/scenarios/validation/deepseek-v3-lognormal-h200.json|--layers 3 --experts 32
RUNS
fi

step "done: status $status (0 = build, every GPU test and the calibration passed); files in $OUT"
ls -la "$OUT"
exit $status
