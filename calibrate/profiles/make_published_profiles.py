#!/usr/bin/env python3
"""Builds the published-microbenchmark calibration profiles (docs/profile.md) from the project's copy
of the published measurements (tests/validation/published.json, copied from
../shared/validation/published.json with every source kept).

Only what the file holds is used: single-GPU GEMM rates (metric "gemm_tflops") and nccl-tests bus
bandwidths with a message size (metric "busbw_gbps"). Each row cites its published.json id and source.
The output is deterministic (sorted rows, fixed provenance, no date), so a test can check that the
checked-in files are what this script writes:

    python3 calibrate/profiles/make_published_profiles.py          # rewrite calibrate/profiles/*-published.json
    python3 calibrate/profiles/make_published_profiles.py --check  # exit 1 if a checked-in file differs
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_INPUT = os.path.join(ROOT, "tests", "validation", "published.json")

# published.json "gpu" → (moesim GPU preset, output name, GPUs per node of the systems the collective
# rows were measured on: both NCCL sweeps are one 8-GPU HGX / ND node, published.json "interconnect").
GPUS = {
    "A100-SXM-80GB": ("a100-sxm-80g", "a100-published", 8),
    "H100-SXM-80GB": ("h100-sxm", "h100-published", 8),
    "B200": ("b200", "b200-published", None),
    "GB200": ("gb200", "gb200-published", None),
}

# published.json bench dtype → profile precision. "FP4" is the Azure guide's cuBLASLt FP4 GEMM on
# Blackwell: block-scaled E2M1, taken as NVFP4 (moesim's only 4-bit format). Block-scaled FP8
# (DeepGEMM, H800 only) and grouped GEMMs are not single cuBLASLt GEMMs and are left out.
PRECISIONS = {"BF16": "bf16", "FP16": "fp16", "FP8": "fp8", "FP4": "nvfp4"}

# nccl-tests bus factor (src/*.cu BusBw): algbw = busbw / factor.
def bus_factor(op, ranks):
    n = float(ranks)
    if op == "all_reduce":
        return 2.0 * (n - 1.0) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1.0) / n
    return 1.0


def round_sig(x, digits=9):
    """Round to `digits` significant digits so the files do not carry float noise."""
    return float(f"{x:.{digits}g}")


def build(rows):
    profiles = {}
    for gpu, (preset, name, per_node) in GPUS.items():
        with open(os.path.join(ROOT, "src", "hw", "gpus", preset + ".json"), encoding="utf-8") as f:
            display_name = json.load(f)["display_name"]
        gemm, collectives, citations = [], [], []
        for r in rows:
            if r.get("gpu") != gpu:
                continue
            bench = r.get("bench") or {}
            if r["metric"] == "gemm_tflops":
                precision = PRECISIONS.get(bench.get("dtype"))
                if r.get("num_gpus") != 1 or precision is None or bench.get("grouped"):
                    continue
                m, n, k = int(bench["m"]), int(bench["n"]), int(bench["k"])
                seconds = 2.0 * m * n * k / (float(r["value"]) * 1e12)
                gemm.append({"precision": precision, "m": m, "n": n, "k": k,
                             "median_us": round_sig(seconds * 1e6), "spread_us": 0, "repeats": 1})
            elif r["metric"] == "busbw_gbps":
                size = bench.get("message_bytes")
                op = bench.get("collective")
                if size is None or op not in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"):
                    continue  # a peak without a size is no point of a curve
                ranks = int(r["num_gpus"])
                if per_node is None or ranks > per_node:
                    continue
                busbw = float(r["value"])
                algbw = busbw / bus_factor(op, ranks)
                collectives.append({"op": op, "ranks": ranks, "ranks_per_node": per_node, "bytes": int(size),
                                    "median_us": round_sig(int(size) / (algbw * 1e3)), "spread_us": 0, "repeats": 1,
                                    "algbw_gbps": round_sig(algbw), "busbw_gbps": busbw})
            else:
                continue
            citations.append(f"{r['id']}: {r['source']}" + (f" ({r['notes']})" if r.get("notes") else ""))
        gemm.sort(key=lambda g: (g["precision"], g["m"], g["n"], g["k"]))
        collectives.sort(key=lambda c: (c["op"], c["ranks"], c["bytes"]))
        keys = [(g["precision"], g["m"], g["n"], g["k"]) for g in gemm]
        if len(set(keys)) != len(keys):
            raise SystemExit(f"{name}: two published GEMM rows of the same precision and shape")
        citations.sort()
        profiles[name] = {
            "schema": "moesim.profile/1",
            "provenance": {
                "source": "published",
                "gpu": preset,
                "device_name": display_name,
                "driver": "unknown",
                "cuda_runtime": "unknown",
                "cublas": "unknown",
                "nccl": "unknown",
                "date": "unknown",
                "host": "unknown",
                "command": "python3 calibrate/profiles/make_published_profiles.py",
                "citations": ["tests/validation/published.json (the project's copy of "
                              "../shared/validation/published.json); one entry per row below, by its id"] + citations,
            },
            "gemm": gemm,
            "grouped_gemm": [],
            "kernels": [],
            "attention": [],
            "collectives": collectives,
        }
    return profiles


def text_of(profile):
    return json.dumps(profile, indent=1, ensure_ascii=False) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default=DEFAULT_INPUT, help="published.json (default: tests/validation/published.json)")
    ap.add_argument("--out-dir", default=HERE, help="where the profiles go (default: calibrate/profiles/)")
    ap.add_argument("--check", action="store_true", help="compare with the files in --out-dir instead of writing")
    args = ap.parse_args()
    with open(args.input, encoding="utf-8") as f:
        rows = json.load(f)
    stale = []
    for name, profile in sorted(build(rows).items()):
        path = os.path.join(args.out_dir, name + ".json")
        text = text_of(profile)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(path)
            except FileNotFoundError:
                stale.append(path)
        else:
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
    if stale:
        print("out of date (run python3 calibrate/profiles/make_published_profiles.py): " + ", ".join(stale),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
