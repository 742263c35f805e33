#!/usr/bin/env python3
"""Refits a GPU profile's achieved efficiencies to published runs: a coarse grid (36 points), then a
pattern search (steps of 0.04, halved down to 0.01) from its three best, over a two-point GEMM
efficiency curve (at 0.2 and 2 TFLOP per GEMM) and the
attention efficiency, minimising the largest |error| of `memwall run` against the `measured:`
throughput of the folder's scenarios that use that GPU. Prints the result and the YAML lines to paste
into model/gpus.yaml. Takes a few minutes.
--fp8 fits only the profile's fp8_gemm_efficiency (FP8 runs of a stack whose BF16 parts are already
fitted): a grid from 0.30 to 0.90, then the same pattern search.
--from P skips the grid and searches from point P (several: P1;P2, the best of their searches) (e.g. the catalog's values, to run --leave-one-out).
--attention E holds the attention efficiency at E (a kernel benchmark's) and fits the GEMM curve alone.
--leave-one-out then refits without each row in turn (a pattern search from the full fit's point)
and predicts that row: how well the profile carries to a run it was not fitted to.

Usage: fit_profile.py GPU_NAME SCENARIO_DIR [--memwall build/memwall] [--catalog model/gpus.yaml]
                      [--only REGEX] [-j N] [--fp8] [--leave-one-out]
                      [--sizes LOW,HIGH]
e.g.   fit_profile.py H100-SXM-calibrated scenarios/validation   (only that GPU's runs are used)
       fit_profile.py A100-80GB-megatron scenarios/validation-megatron --only '^0[1-6]' -j 2
       fit_profile.py H100-SXM-megatron-core scenarios/validation-nemo-fp8 --only '^0' --fp8
--only keeps the scenario files whose names match; -j runs them in N processes; --sizes places the
curve's two points (TFLOP per d x d GEMM) where the set's GEMMs lie (default 0.2 and 2).
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
FP8_KEY = re.compile(r"\s+fp8_gemm_efficiency:")


# The GEMM sizes (TFLOP) of the curve's two points; --sizes moves them to span a set's GEMMs.
SIZES_TFLOP = [0.2, 2.0]


def candidate_lines(low, high, attention):
    return ["gemm_efficiency:", f"  - {{gemm_flops: {SIZES_TFLOP[0]:g}TFLOP, efficiency: {low:g}}}",
            f"  - {{gemm_flops: {SIZES_TFLOP[1]:g}TFLOP, efficiency: {high:g}}}", f"attention_efficiency: {attention:g}"]


def fp8_lines(efficiency):
    return [f"fp8_gemm_efficiency: {efficiency:g}"]


def with_efficiencies(catalog_text, gpu, lines, keys=EFFICIENCY_KEY):
    """The catalog with `gpu`'s efficiency keys (and curve items) replaced by `lines`."""
    out, inside, skipping = [], False, False
    for line in catalog_text.splitlines():
        if line.strip().startswith("- name:"):
            inside = line.strip() == f"- name: {gpu}"
        if inside and keys.match(line):
            skipping = True
            continue
        if skipping and line.startswith("      - "):
            continue
        skipping = False
        if inside and line.strip().startswith("source:"):
            out.extend("    " + x for x in lines)
        out.append(line)
    return "\n".join(out) + "\n"


def errors(memwall, catalog_path, files, gpu, jobs=1):
    env = dict(os.environ, MEMWALL_GPU_CATALOG=catalog_path)
    # The files in `jobs` processes, each a slice of them; rows come back in file order.
    slices = [files[i::jobs] for i in range(jobs) if files[i::jobs]]
    procs = [subprocess.Popen([memwall, "run", "--json", *part], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for part in slices]
    by_file = {}
    for part, proc in zip(slices, procs):
        out, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"memwall run failed: {err.strip()}")
        for f, line in zip(part, out.splitlines()):
            by_file[f] = json.loads(line)
    rows = [by_file[f] for f in files]
    return [r["tokens_per_s_per_gpu"] / r["measured_tokens_per_s_per_gpu"] - 1 for r in rows
            if r["gpu"] == gpu and "measured_tokens_per_s_per_gpu" in r]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("gpu")
    p.add_argument("dir", nargs="+", help="scenario folders (several: one fit over all their rows)")
    p.add_argument("--memwall", default=os.path.join(HERE, "..", "build", "memwall"))
    p.add_argument("--catalog", default=os.path.join(HERE, "..", "model", "gpus.yaml"))
    p.add_argument("--only", default="", help="keep the scenario files whose names match this regex")
    p.add_argument("-j", "--jobs", type=int, default=1, help="memwall processes at once")
    p.add_argument("--fp8", action="store_true", help="fit only fp8_gemm_efficiency")
    p.add_argument("--joint-fp8", action="store_true",
                   help="fit the curve, attention and fp8_gemm_efficiency together (BF16 and FP8 rows; needs --from)")
    p.add_argument("--attention", type=float,
                   help="hold attention_efficiency at this value (from a kernel benchmark) and fit the GEMM curve alone")
    p.add_argument("--from", dest="start", help="skip the grid: a pattern search from this point (comma-separated, "
                   "e.g. the catalog's fitted values, before --leave-one-out)")
    p.add_argument("--sizes", default="0.2,2", help="the curve's two GEMM sizes in TFLOP (default 0.2,2)")
    p.add_argument("--leave-one-out", action="store_true", help="then refit without each row and predict it")
    a = p.parse_args()
    SIZES_TFLOP[:] = [float(v) for v in a.sizes.split(",")]
    if len(SIZES_TFLOP) != 2 or not 0 < SIZES_TFLOP[0] < SIZES_TFLOP[1]:
        raise SystemExit(f"--sizes takes two increasing GEMM sizes in TFLOP, not '{a.sizes}'")
    base = open(a.catalog).read()
    files = []
    for d in a.dir:
        files += sorted(os.path.join(d, f) for f in os.listdir(d)
                        if f.endswith(".yaml") and re.search(rf"^gpu: {re.escape(a.gpu)}\s*$",
                                                             open(os.path.join(d, f)).read(), re.M)
                        and re.search(a.only, f))
    if not files:
        raise SystemExit(f"no scenario in {' '.join(a.dir)} uses {a.gpu}")
    lines_of, keys = (fp8_lines, FP8_KEY) if a.fp8 else (candidate_lines, EFFICIENCY_KEY)
    if a.attention is not None and not a.fp8:
        lines_of = lambda low, high: candidate_lines(low, high, a.attention)
    if a.joint_fp8:  # BF16 and FP8 rows at once: the curve, attention and the FP8 share together
        lines_of = lambda low, high, attention, fp8: candidate_lines(low, high, attention) + fp8_lines(fp8)
        keys = re.compile(r"\s+(gemm_efficiency|attention_efficiency|hbm_efficiency|fp8_gemm_efficiency):")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "gpus.yaml")
        seen = {}

        def evaluate(point):
            key = tuple(round(v, 4) for v in point)
            if key not in seen:
                with open(path, "w") as f:
                    f.write(with_efficiencies(base, a.gpu, lines_of(*key), keys))
                seen[key] = errors(a.memwall, path, files, a.gpu, max(1, a.jobs))
            return seen[key]

        def worst(point, leave_out=None):
            errs = evaluate(point)
            return max(abs(e) for i, e in enumerate(errs) if i != leave_out)

        def pattern_search(point, leave_out=None):
            step = 0.04
            while step >= 0.01 - 1e-12:
                moved = False
                for i, sign in itertools.product(range(len(point)), (1, -1)):
                    trial = list(point)
                    trial[i] = round(min(1.0, max(0.01, trial[i] + sign * step)), 4)
                    if worst(trial, leave_out) < worst(point, leave_out):
                        point, moved = trial, True
                if not moved:
                    step /= 2
            return point

        if a.start:
            grid = sorted((tuple(float(v) for v in s.split(",")) for s in a.start.split(";")), key=worst)
        elif a.fp8:
            grid = sorted(((0.3 + 0.05 * i,) for i in range(13)), key=worst)
        elif a.attention is not None:
            grid = sorted(itertools.product((0.4, 0.5, 0.6), (0.6, 0.7, 0.8)), key=worst)
        else:
            grid = sorted(itertools.product((0.4, 0.5, 0.6), (0.6, 0.7, 0.8), (0.15, 0.3, 0.5, 0.7)), key=worst)
        point = min((pattern_search(list(start)) for start in grid[:3]), key=worst)
        errs = evaluate(point)
        print(f"{len(files)} runs, {len(seen)} candidates tried; largest |error| {100 * worst(point):.1f}%: "
              + " ".join(f"{100 * e:+.1f}%" for e in errs))
        print("\n".join(lines_of(*point)))
        if a.leave_one_out:
            held = []
            for i, f in enumerate(files):
                refit = pattern_search(list(point), leave_out=i)
                held.append(evaluate(refit)[i])
                print(f"left out {os.path.basename(f)}: refit {' '.join(f'{v:g}' for v in refit)}, "
                      f"its error {100 * held[-1]:+.1f}%", flush=True)
            within = sum(abs(e) <= 0.10 for e in held)
            print(f"leave-one-out: {within} of {len(held)} within 10%, largest |error| "
                  f"{100 * max(abs(e) for e in held):.1f}%")


if __name__ == "__main__":
    main()
