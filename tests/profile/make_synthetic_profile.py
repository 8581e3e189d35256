#!/usr/bin/env python3
"""Writes data/h200-synthetic.json: a small *synthetic* measured-style H200 profile for the profile
tests (tests/profile/README.md). Its numbers are drawn from simple closed forms below, not measured on
any GPU. Deterministic: `python3 make_synthetic_profile.py` rewrites the same file."""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BF16_PEAK = 989e12  # H200 SXM dense BF16 (src/hw/gpus/h200-sxm.json)
HBM = 4.8e12        # H200 HBM3e, bytes/s


def us(seconds):
    return round(seconds * 1e6, 3)


def timing(seconds):
    return {"median_us": us(seconds), "spread_us": round(us(seconds) * 0.02, 3), "repeats": 20}


def gemm_rows():
    rows = []
    for m in (512, 2048, 8192):
        for n in (1024, 4096, 14336):
            for k in (1024, 4096):
                eff = 0.74 * m / (m + 192) * n / (n + 192) * k / (k + 96)
                t = 2.0 * m * n * k / (eff * BF16_PEAK) + 4e-6
                rows.append({"precision": "bf16", "m": m, "n": n, "k": k, **timing(t),
                             "algorithm": "synthetic", "best_algorithm_us": round(us(t) * 0.98, 3)})
    return rows


def grouped_rows():
    rows = []
    for n, k in ((28672, 4096), (4096, 14336)):
        for tokens in ([1024] * 8, [4096] * 8, [7000, 5000, 3000, 2000, 1500, 1000, 500, 300]):
            flops = 2.0 * sum(tokens) * n * k
            eff = 0.70 * (sum(tokens) / 8) / (sum(tokens) / 8 + 256)
            rows.append({"precision": "bf16", "implementation": "grouped_batched", "tokens": tokens, "n": n, "k": k,
                         **timing(flops / (eff * BF16_PEAK) + 6e-6)})
    return rows


def kernel_rows():
    rows = []
    sizes = [1 << s for s in range(20, 31, 2)]  # 1 MiB .. 1 GiB
    for b in sizes:
        rows.append({"kernel": "copy", "bytes": b, "shape": {"bytes": b}, **timing(b / (0.90 * HBM * b / (b + 4e6)))})
    for tokens in (4096, 16384):
        hidden, experts, topk = 4096, 8, 2
        moved = tokens * hidden * 2 * (1 + topk)
        shape = {"tokens": tokens, "hidden": hidden, "experts": experts, "topk": topk}
        for kernel, share in (("permute", 0.80), ("unpermute", 0.78)):
            rows.append({"kernel": kernel, "bytes": moved, "shape": shape,
                         **timing(moved / (share * HBM * moved / (moved + 4e6)))})
        scores = tokens * experts * 4 * 3
        rows.append({"kernel": "router_softmax_topk", "bytes": scores, "shape": shape,
                     **timing(scores / (0.5 * HBM * scores / (scores + 4e6)))})
        cast = tokens * hidden * 4
        rows.append({"kernel": "cast_fp8", "bytes": cast, "shape": {"tokens": tokens, "hidden": hidden},
                     **timing(cast / (0.85 * HBM * cast / (cast + 4e6)))})
    return rows


def attention_rows():
    rows = []
    for direction, rate in (("forward", 0.55), ("backward", 0.45)):
        for bh in (8, 32):
            for seq in (2048, 8192):
                flops = 2.0 * bh * seq * seq * 0.5 * 256 * (2.5 if direction == "backward" else 1.0)
                rows.append({"implementation": "flash", "direction": direction, "batch_heads": bh, "seq": seq,
                             "head_dim": 128, "causal": True,
                             **timing(flops / (rate * BF16_PEAK) + 5e-6)})
    return rows


def factor(op, n):
    return {"all_reduce": 2.0 * (n - 1) / n, "send_recv": 1.0}.get(op, (n - 1) / n)


def collective_rows():
    rows = []
    for op, ranks, peak, half in (("all_reduce", 8, 360e9, 8e6), ("all_gather", 8, 350e9, 6e6),
                                  ("reduce_scatter", 8, 350e9, 6e6), ("all_to_all", 8, 330e9, 4e6),
                                  ("send_recv", 2, 380e9, 2e6)):
        for size in [1 << s for s in range(10, 31, 4)]:  # 1 KiB .. 1 GiB
            busbw = peak * size / (size + half)
            algbw = busbw / factor(op, ranks)
            rows.append({"op": op, "ranks": ranks, "ranks_per_node": 8, "bytes": size,
                         "median_us": round(size / algbw * 1e6, 3), "spread_us": 0.5, "repeats": 20,
                         "algbw_gbps": round(size / (round(size / algbw * 1e6, 3) * 1e3), 6),
                         "busbw_gbps": round(size / (round(size / algbw * 1e6, 3) * 1e3) * factor(op, ranks), 6)})
    return rows


def main():
    profile = {
        "schema": "moesim.profile/1",
        "provenance": {"source": "measured", "gpu": "h200-sxm", "device_name": "NVIDIA H200 (synthetic test data)",
                       "sm_count": 132, "sm_clock_mhz": 1980, "memory_clock_mhz": 3201, "gpus_visible": 8,
                       "driver": "synthetic", "cuda_runtime": "synthetic", "cublas": "synthetic", "nccl": "synthetic",
                       "date": "2025-01-01T00:00:00Z", "host": "none",
                       "command": "python3 tests/profile/make_synthetic_profile.py",
                       "citations": ["synthetic: closed forms in tests/profile/make_synthetic_profile.py, not measured"]},
        "gemm": gemm_rows(),
        "grouped_gemm": grouped_rows(),
        "kernels": kernel_rows(),
        "attention": attention_rows(),
        "collectives": collective_rows(),
    }
    with open(os.path.join(HERE, "data", "h200-synthetic.json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(profile, indent=1) + "\n")


if __name__ == "__main__":
    main()
