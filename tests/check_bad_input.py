#!/usr/bin/env python3
"""Every malformed scenario in bad-scenarios/ must be refused by `memwall validate` and `memwall run`
with exit code 2 and exactly one error line naming the file, the line and the key given in the
file's first line (`# expect: LINE KEY`, KEY '-' for none). Bad GPU catalogs likewise, and every bad
fabric file in bad-fabrics/ by `memwall topo` (`# expect: LINE KEY GPUS REASON...`). Keys a layout
does not apply (WARNED) run with a warning naming file, line and key.

Usage: check_bad_input.py MEMWALL
"""
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def check(cmd, path, line, key, env=None, reason=""):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    problems = []
    if p.returncode != 2:
        problems.append(f"exit code {p.returncode}, expected 2")
    err = p.stderr.strip().splitlines()
    if len(err) != 1:
        problems.append(f"{len(err)} error lines, expected 1: {p.stderr!r}")
    elif not err[0].startswith(f"memwall: error: {path}:{line}: "):
        problems.append(f"error does not name {path}:{line}: {err[0]!r}")
    elif key != "-" and f": {key}: " not in err[0]:
        problems.append(f"error does not name key {key}: {err[0]!r}")
    elif reason and reason not in err[0]:
        problems.append(f"error does not give the reason '{reason}': {err[0]!r}")
    if p.stdout.strip():
        problems.append(f"printed output despite the error: {p.stdout!r}")
    return problems


BAD_CATALOGS = {
    # name: (text, line, key)
    "negative-peak": ("gpus:\n  - name: X\n    peak: -1TFLOP/s\n", 3, "gpus[0].peak"),
    "unknown-field": ("gpus:\n  - name: X\n    peek: 1TFLOP/s\n", 3, "gpus[0].peek"),
    "missing-field": ("gpus:\n  - name: X\n    peak: 1TFLOP/s\n", 2, "gpus[0]"),
}


# Keys that a layout does not apply: the run goes on, with a warning at the key's file:line (never
# silently dropped). name: (cluster and training lines, parallelism, line, key)
WARNED = {
    "auto-with-tensor": ("  collective: auto\n", "{tensor: 2}", 11, "cluster.collective"),
    "ring-order-with-pipeline": ("  ring_order: rank\n", "{pipeline: 2}", 11, "cluster.ring_order"),
    "tp-overlap-with-tensor-1": ("", "{tp_overlap: true}", 12, "parallelism.tp_overlap"),
    "moe-a2a-overlap-with-expert-1": ("", "{tensor: 2, moe_a2a_overlap: true}", 12, "parallelism.moe_a2a_overlap"),
    "schedule-without-pipeline": ("", "{schedule: gpipe}", 12, "parallelism.schedule"),
    "bucket-without-overlap": ("training: {bucket: 4MB}\n", "{tensor: 1}", 13, "training.bucket"),
}
WARNED_BASE = """name: a key the layout does not apply
gpu: H100-SXM
model:
  hidden: 1024
  layers: 8
  heads: 16
  seq_len: 2048
batch: {{tokens_per_microbatch: 2048, microbatches: 2}}
cluster:
  gpus: 16
{cluster}  fabric: dgx-h100-ndr
parallelism: {parallelism}
{training}"""


def check_warned(memwall, tmp):
    problems = []
    for name, (text, parallelism, line, key) in WARNED.items():
        cluster, training = (text, "") if text.startswith("  ") else ("", text)
        path = os.path.join(tmp, name + ".yaml")
        open(path, "w").write(WARNED_BASE.format(cluster=cluster, training=training, parallelism=parallelism))
        p = subprocess.run([memwall, "run", path], capture_output=True, text=True)
        want = f"memwall: warning: {path}:{line}: {key}: "
        if p.returncode != 0:
            problems.append(f"{name}: exit {p.returncode}: {p.stderr!r}")
        elif not any(l.startswith(want) for l in p.stderr.splitlines()):
            problems.append(f"{name}: no warning '{want}...': {p.stderr!r}")
    return problems


def main():
    memwall = sys.argv[1]
    failures, cases = 0, 0
    for path in sorted(glob.glob(os.path.join(HERE, "bad-scenarios", "*.yaml"))):
        line, key = open(path, errors="replace").readline().split()[2:4]
        for cmd in ([memwall, "validate", path], [memwall, "run", path]):
            cases += 1
            for problem in check(cmd, path, line, key):
                failures += 1
                print(f"{os.path.basename(path)} ({cmd[1]}): {problem}")
    for path in sorted(glob.glob(os.path.join(HERE, "bad-fabrics", "*.yaml"))):
        words = open(path).readline().split()
        line, key, gpus, reason = words[2], words[3], words[4], " ".join(words[5:])
        cases += 1
        for problem in check([memwall, "topo", path, "--gpus", gpus], path, line, key, reason=reason):
            failures += 1
            print(f"{os.path.basename(path)} (topo): {problem}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, line, key) in BAD_CATALOGS.items():
            path = os.path.join(tmp, name + ".yaml")
            open(path, "w").write(text)
            env = dict(os.environ, MEMWALL_GPU_CATALOG=path)
            cases += 1
            for problem in check([memwall, "gpus"], path, line, key, env):
                failures += 1
                print(f"catalog {name}: {problem}")
        for problem in check_warned(memwall, tmp):
            failures += 1
            print(f"warned: {problem}")
        cases += len(WARNED)
    print(f"{cases} bad inputs checked, {failures} problems")
    return 1 if failures or cases < 12 else 0


if __name__ == "__main__":
    sys.exit(main())
