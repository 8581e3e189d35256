#!/usr/bin/env python3
"""Writes small-moe-routing.csv: a SYNTHETIC routing histogram shaped like a measured one.

4 MoE layers x 16 experts, one step of 8192 tokens x top-2 = 16384 routed copies per layer.
Each layer's expert popularity is log-normal (sigma 0.8, layer 3: 1.2, the shape DeepEP PR #393
found to fit DeepSeek-V3's measured loads best), counts rounded to integers. The seed is fixed,
so running it again rewrites the same file. Python's standard library only.
"""
import math
import random

EXPERTS, LAYERS, TOPK, TOKENS = 16, 4, 2, 8192
SIGMAS = [0.8, 0.8, 0.8, 1.2]


def main():
    rng = random.Random(2026)
    lines = ["# SYNTHETIC routing histogram for tests (see tests/data/README.md); made by make_small_moe_histogram.py",
             "layer,expert,tokens"]
    for layer in range(LAYERS):
        weights = [math.exp(SIGMAS[layer] * rng.gauss(0.0, 1.0)) for _ in range(EXPERTS)]
        total = sum(weights)
        counts = [round(w / total * TOKENS * TOPK) for w in weights]
        assert max(counts) <= TOKENS, "a token picks an expert at most once"
        lines += [f"{layer},{e},{c}" for e, c in enumerate(counts)]
    with open("small-moe-routing.csv", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
