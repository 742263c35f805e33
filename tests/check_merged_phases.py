#!/usr/bin/env python3
"""A GPU's back-to-back phases run as one SimGrid activity (speed, issue 17): against the reference
run that makes every phase its own activity (MEMWALL_SEPARATE_PHASES=1), on shipped scenarios of every
kind (pure data parallelism, overlap, ZeRO-1/2/3, FSDP, stragglers, link failures, power caps). Every
number of `run --json` must be equal: bit for bit where no other event lands inside a run of phases,
and otherwise within 1e-11 relative (SimGrid's clock rounds the last bit when another actor's event
falls inside a phase; differences of two nearly equal times, such as the exposed communication, show
it most), or, for a time, within SimGrid's timing precision (1e-9 s: an execution with another event
that close to its end ends then).

Usage: check_merged_phases.py MEMWALL
"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SCENARIOS = [
    "scenarios/worked-example",
    "scenarios/validation/a100-04-mpt7b-064gpu-seq2048.yaml",
    "scenarios/validation/a100-13-mpt13b-128gpu-seq2048.yaml",
    "scenarios/validation/h100-04-mpt7b-seq8192.yaml",
    "scenarios/validation-heldout/a100-10-mpt3b-008gpu-seq16384.yaml",
    "scenarios/validation-heldout/h100-02-mpt7b-seq65536.yaml",
    "scenarios/what-if",
    # Power caps and the activity model; 03 (512 GPUs, 12 virtual stages) left out: it takes minutes
    # under the sanitizers (bench/ and the power validation test run it).
    "scenarios/validation-energy/01-h100-node-llama2-13b-peak.yaml",
    "scenarios/validation-energy/02-h100-node-llm-mean.yaml",
    "scenarios/validation-energy/04-mlperf-bert-large-8-h100.yaml",
    "tests/link-failures",
]
SKIP = {"sim_wall_s", "activities_per_s", "file"}


def runs(memwall, separate):
    env = dict(os.environ, MEMWALL_SEPARATE_PHASES="1" if separate else "0")
    out = {}
    for path in SCENARIOS:
        full = os.path.join(ROOT, path)
        files = sorted(os.path.join(full, f) for f in os.listdir(full) if f.endswith(".yaml")) \
            if os.path.isdir(full) else [full]
        for f in files:
            p = subprocess.run([memwall, "run", f, "--json", "--allow-oom"], capture_output=True, text=True, env=env)
            out[os.path.relpath(f, ROOT)] = (p.returncode, [json.loads(l) for l in p.stdout.splitlines() if l])
    return out


def compare(a, b, path, problems, stats):
    if isinstance(a, dict):
        for k in a:
            if k not in SKIP:
                compare(a[k], b.get(k), f"{path}.{k}", problems, stats)
    elif isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b or [])):
            compare(x, y, f"{path}[{i}]", problems, stats)
    elif a != b:
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            r = abs(a - b) / max(abs(a), abs(b))
            stats.append(r)
            # SimGrid's timing precision (precision/timing, 1e-9 s) lets an execution end up to 1e-9 s
            # early when another actor's event falls that close to its end: a time may differ by that.
            if r > 1e-11 and not (path.endswith("_s") and abs(a - b) <= 1e-9):
                problems.append(f"{path}: {a} vs {b} (relative {r:.1e})")
        else:
            problems.append(f"{path}: {a!r} vs {b!r}")


def main():
    memwall = sys.argv[1]
    merged, separate = runs(memwall, False), runs(memwall, True)
    problems, stats = [], []
    identical = 0
    for f in separate:
        if merged[f][0] != separate[f][0]:
            problems.append(f"{f}: exit {merged[f][0]} merged, {separate[f][0]} separate")
            continue
        before = len(stats)
        compare(separate[f][1], merged[f][1], f, problems, stats)
        identical += len(stats) == before
    print(f"{len(separate)} scenarios: {identical} bit for bit identical, largest relative difference "
          f"{max(stats, default=0):.1e} over {len(stats)} differing numbers")
    for p in problems:
        print("FAIL:", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
