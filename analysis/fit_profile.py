#!/usr/bin/env python3
"""Refits a GPU profile's achieved efficiencies to published runs: a grid search over a two-point
GEMM efficiency curve (at 0.2 and 2 TFLOP per GEMM) and the attention efficiency that minimises the
largest |error| of `memwall run` against each scenario's `measured:` throughput. Prints the best
candidates and the YAML lines to paste into model/gpus.yaml. Takes a few minutes (it runs every scenario of the folder 144 times).

Usage: fit_profile.py GPU_NAME SCENARIO_DIR [--memwall build/memwall] [--catalog model/gpus.yaml]
e.g.   fit_profile.py H100-SXM-calibrated scenarios/validation   (only that GPU's runs are used)
"""
import argparse
import itertools
import json
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EFFICIENCY_KEY = re.compile(r"\s+(gemm_efficiency|attention_efficiency|hbm_efficiency):")


def candidate_lines(low, high, attention):
    return ["gemm_efficiency:", f"  - {{gemm_flops: 0.2TFLOP, efficiency: {low}}}",
            f"  - {{gemm_flops: 2TFLOP, efficiency: {high}}}", f"attention_efficiency: {attention}"]


def with_efficiencies(catalog_text, gpu, lines):
    """The catalog with `gpu`'s efficiency keys (and curve items) replaced by `lines`."""
    out, inside, skipping = [], False, False
    for line in catalog_text.splitlines():
        if line.strip().startswith("- name:"):
            inside = line.strip() == f"- name: {gpu}"
        if inside and EFFICIENCY_KEY.match(line):
            skipping = True
            continue
        if skipping and line.startswith("      - "):
            continue
        skipping = False
        if inside and line.strip().startswith("source:"):
            out.extend("    " + x for x in lines)
        out.append(line)
    return "\n".join(out) + "\n"


def errors(memwall, catalog_path, scenario_dir, gpu):
    env = dict(os.environ, MEMWALL_GPU_CATALOG=catalog_path)
    out = subprocess.run([memwall, "run", "--json", scenario_dir], env=env, check=True, capture_output=True,
                         text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()]
    return [r["tokens_per_s_per_gpu"] / r["measured_tokens_per_s_per_gpu"] - 1 for r in rows
            if r["gpu"] == gpu and "measured_tokens_per_s_per_gpu" in r]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpu")
    p.add_argument("dir")
    p.add_argument("--memwall", default=os.path.join(HERE, "..", "build", "memwall"))
    p.add_argument("--catalog", default=os.path.join(HERE, "..", "model", "gpus.yaml"))
    a = p.parse_args()
    base = open(a.catalog).read()
    grid = itertools.product([0.36, 0.40, 0.44, 0.48], [0.58, 0.60, 0.62, 0.64, 0.66, 0.68],
                             [0.25, 0.30, 0.35, 0.40, 0.45, 0.50])
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpus.yaml")
        for low, high, attention in grid:
            with open(path, "w") as f:
                f.write(with_efficiencies(base, a.gpu, candidate_lines(low, high, attention)))
            errs = errors(a.memwall, path, a.dir, a.gpu)
            if not errs:
                raise SystemExit(f"no run in {a.dir} uses {a.gpu} and has a measured figure")
            results.append((max(abs(e) for e in errs), low, high, attention, errs))
    results.sort()
    for worst, low, high, attention, errs in results[:5]:
        print(f"largest |error| {100 * worst:.1f}%: 0.2 TFLOP {low}, 2 TFLOP {high}, attention {attention}; "
              + " ".join(f"{100 * e:+.1f}%" for e in errs))
    print("\n".join(candidate_lines(*results[0][1:4])))


if __name__ == "__main__":
    main()
