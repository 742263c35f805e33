#!/usr/bin/env python3
"""Memory capacity: the seed's 1-GPU 7B scenario without allow_oom is refused (exit 2) with the
footprint's numbers; with --allow-oom it runs and the table, the JSON and the trace flag it.

Usage: check_memory.py MEMWALL WORKED_EXAMPLE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

import h5py


def main():
    memwall, worked = sys.argv[1:3]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        text = open(os.path.join(worked, "2-one-sequence.yaml")).read()
        scenario = os.path.join(tmp, "one-gpu-7b.yaml")
        open(scenario, "w").write(re.sub(r"(?m)^allow_oom:.*$", "", text))
        p = subprocess.run([memwall, "run", scenario], capture_output=True, text=True)
        # 16 B/param x 6.852 G params + 34 d s L + the CUDA context (one GPU: no NCCL communicator)
        # = 109.6 + 9.1 + 0.5 GB, over an A100 80GB's 81158 MiB = 85.1 GB as CUDA reports it.
        want = ["119.3 GB per GPU", "optimizer state 82.2", "activations 9.1", "CUDA context and NCCL 0.5",
                "> 85.1 GB", "--allow-oom"]
        if p.returncode != 2 or p.stdout or not all(w in p.stderr for w in want):
            failures.append(f"refusal: rc={p.returncode} stderr={p.stderr!r}")
        print("refused:", p.stderr.strip())
        v = subprocess.run([memwall, "validate", scenario], capture_output=True, text=True)
        if v.returncode != 2:
            failures.append(f"validate accepted the plan: {v.stdout}")
        trace = os.path.join(tmp, "t.h5")
        table = subprocess.run([memwall, "run", scenario, "--allow-oom", "--trace", trace], capture_output=True,
                               text=True)
        if table.returncode != 0 or "[OOM 119.3 GB > 85.1 GB]" not in table.stdout:
            failures.append(f"--allow-oom table: rc={table.returncode} {table.stdout!r} {table.stderr!r}")
        js = subprocess.run([memwall, "run", scenario, "--allow-oom", "--json"], capture_output=True, text=True)
        if '"oom":true' not in js.stdout or '"sharding":"zero1"' not in js.stdout:
            failures.append(f"--allow-oom JSON not flagged: {js.stdout[:200]}")
        with h5py.File(trace, "r") as f:
            if f.attrs.get("oom") not in ("true", b"true") or f["summary"].attrs.get("oom") not in ("true", b"true"):
                failures.append("trace not flagged")
    for f in failures:
        print("FAIL:", f)
    print(f"{0 if failures else 1} passed, {1 if failures else 0} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
