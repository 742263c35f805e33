#!/usr/bin/env python3
"""The published training layouts (scenarios/published/, one per row of
../shared/published-layouts/layouts.json): every file is accepted by `memwall validate`, or refused
(exit 2) for the reason scenarios/published/refused.txt lists for it. A refusal that goes away, or
a new one, fails: the list is the honest state of issue 28's acceptance, and shrinks as memwall
learns these runs. Also: one file per published row, none left over, none missing.

With --run MAX_GPUS [--shard I/K], instead: every accepted file of at most MAX_GPUS GPUs (the I-th of
K shards, so that ctest -j spreads them) is simulated and must end in a result: exit 0, a positive
step time, no out-of-memory flag (issue 28: "runs: no refusal, no out-of-memory report, a result").

Usage: check_published.py MEMWALL PUBLISHED_DIR [LAYOUTS_JSON] [--run MAX_GPUS [--shard I/K]]
"""
import json
import os
import re
import subprocess
import sys


def run_all(memwall, folder, max_gpus, shard, shards):
    """Simulates the files of up to max_gpus GPUs in this shard; each must give a result."""
    failures, ran = [], 0
    files = sorted(f for f in os.listdir(folder) if f.endswith(".yaml"))
    for i, name in enumerate(files):
        gpus = int(re.search(r"^cluster: \{gpus: (\d+)", open(os.path.join(folder, name)).read(), re.M).group(1))
        if gpus > max_gpus or i % shards != shard:
            continue
        run = subprocess.run([memwall, "run", "--json", os.path.join(folder, name)], capture_output=True, text=True,
                             timeout=900)
        ran += 1
        if run.returncode != 0:
            failures.append(f"{name}: exit {run.returncode}: {run.stderr.strip()[-300:]}")
            continue
        r = json.loads(run.stdout)
        if not r["step_time_s"] > 0 or r["oom"]:
            failures.append(f"{name}: step {r['step_time_s']} s, oom {r['oom']}")
        else:
            print(f"{name:45s} {gpus:6d} GPUs  step {r['step_time_s']:8.3f} s  {r['footprint_bytes'] / 1e9:6.1f} GB")
    print(f"{ran} published layouts of at most {max_gpus} GPUs simulated (shard {shard + 1} of {shards})")
    if failures:
        sys.exit("\n".join(failures))


def main():
    if "--run" in sys.argv:
        at = sys.argv.index("--run")
        shard, shards = 0, 1
        if "--shard" in sys.argv:
            shard, shards = (int(x) for x in sys.argv[sys.argv.index("--shard") + 1].split("/"))
        return run_all(sys.argv[1], sys.argv[2], int(sys.argv[at + 1]), shard, shards)
    memwall, folder = sys.argv[1], sys.argv[2]
    layouts = sys.argv[3] if len(sys.argv) > 3 else None
    refused = {}
    with open(os.path.join(folder, "refused.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                run_id, reason = line.split(":", 1)
                refused[run_id.strip()] = reason.strip()
    files = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".yaml"))
    failures = []
    if layouts and os.path.exists(layouts):
        ids = sorted(r["id"] for r in json.load(open(layouts)))
        if ids != files:
            failures.append(f"files differ from the published rows: missing {sorted(set(ids) - set(files))}, "
                            f"extra {sorted(set(files) - set(ids))}")
    for name in sorted(set(refused) - set(files)):
        failures.append(f"refused.txt lists {name}, which has no file")
    accepted = 0
    for name in files:
        path = os.path.join(folder, name + ".yaml")
        text = open(path).read()
        if not text.startswith(f"# {name}: ") or "\n# Source: " not in text:
            failures.append(f"{name}: the file does not open with its run and its source")
        run = subprocess.run([memwall, "validate", path], capture_output=True, text=True, timeout=120)
        message = (run.stdout + run.stderr).strip()
        if name in refused:
            if run.returncode != 2 or refused[name] not in message:
                failures.append(f"{name}: listed as refused for '{refused[name]}', got exit {run.returncode}: "
                                f"{message[-300:]}")
        elif run.returncode != 0:
            failures.append(f"{name}: exit {run.returncode}: {message[-300:]}")
        else:
            accepted += 1
    print(f"{accepted} of {len(files)} published layouts accepted, {len(refused)} refused as listed")
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
