#!/usr/bin/env python3
"""Sweep behaviour: broken points, resume after an interruption, shard + merge.

Usage: check_sweeps.py MEMWALL broken|resume|shards|hdf5|parity
"""
import csv
import re
import os
import signal
import subprocess
import sys
import tempfile
import time

SWEEP = """
scenario:
  name: small
  gpu: A100-80GB
  model: {hidden: 2048, layers: 8, seq_len: 1024, vocab: 1000}
  batch: {tokens_per_microbatch: 1024, microbatches: 2}
  cluster: {gpus: 4, fabric: {kind: star, bandwidth: 25GB/s}}
sweep:
  cluster.gpus: GPUS
  batch.microbatches: [1, 4]
"""


def write_sweep(tmp, gpus):
    path = os.path.join(tmp, "sweep.yaml")
    open(path, "w").write(SWEEP.replace("GPUS", gpus))
    return path


def rows(path):
    return list(csv.DictReader(open(path)))


def sweep(memwall, *args):
    return subprocess.run([memwall, "sweep", *args], capture_output=True, text=True)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def broken(memwall, tmp):
    path = write_sweep(tmp, "[2, 0, 8]")  # gpus: 0 is impossible: points 2 and 3 are broken
    out = os.path.join(tmp, "r.csv")
    p = sweep(memwall, path, "-j", "2", "--out", out)
    if p.returncode == 0:
        fail("a sweep with broken points exited 0")
    r = rows(out)
    status = {int(x["point"]): x["status"] for x in r}
    if status != {0: "ok", 1: "ok", 2: "error", 3: "error", 4: "ok", 5: "ok"}:
        fail(f"unexpected statuses {status}")
    broken_rows = [x for x in r if x["status"] == "error"]
    if not all("cluster.gpus" in x["error"] and "at least 1" in x["error"] for x in broken_rows):
        fail(f"errors do not say what is wrong: {[x['error'] for x in broken_rows]}")
    if "point 2" not in p.stderr or "point 3" not in p.stderr:
        fail(f"broken points not reported: {p.stderr}")
    if any(x["step_time_s"] == "" for x in r if x["status"] == "ok"):
        fail("good points lack results")
    print(f"broken points reported, {sum(s == 'ok' for s in status.values())} others finished")


def resume(memwall, tmp):
    # Larger points so that the sweep can be killed half-way.
    path = write_sweep(tmp, "[256, 512, 768, 1024]")
    full = os.path.join(tmp, "full.csv")
    if sweep(memwall, path, "-j", "2", "--out", full).returncode != 0:
        fail("full sweep failed")
    out = os.path.join(tmp, "interrupted.csv")
    proc = subprocess.Popen([memwall, "sweep", path, "-j", "1", "--out", out], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        if os.path.exists(out) and len(rows(out)) >= 2:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = {x["point"] for x in rows(out) if x["status"] == "ok"}
    if not 2 <= len(done_before) < 8:
        fail(f"the kill came too late or too early: {len(done_before)} points done")
    p = sweep(memwall, path, "-j", "2", "--resume", "--out", out)
    if p.returncode != 0:
        fail(f"resume failed: {p.stderr}")
    if f"resuming: {len(done_before)} point(s) already done" not in p.stderr:
        fail(f"resume did not skip the finished points: {p.stderr}")
    ran = p.stderr.count("sweep: ")
    if ran != 8 - len(done_before):
        fail(f"resume ran {ran} points, expected {8 - len(done_before)}")
    if open(out).read() != open(full).read():
        fail("resumed results differ from an uninterrupted sweep")
    print(f"killed after {len(done_before)} points; resume ran the other {ran}; results equal")


def shards(memwall, tmp):
    path = write_sweep(tmp, "[2, 3, 8]")
    full, a, b, merged = (os.path.join(tmp, n) for n in ("full.csv", "a.csv", "b.csv", "merged.csv"))
    for out, extra in ((full, []), (a, ["--shard", "1/2"]), (b, ["--shard", "2/2"])):
        if sweep(memwall, path, "--out", out, *extra).returncode != 0:
            fail(f"sweep {extra} failed")
    if not rows(a) or not rows(b) or len(rows(a)) + len(rows(b)) != 6:
        fail("shards do not split the 6 points")
    if set(x["point"] for x in rows(a)) & set(x["point"] for x in rows(b)):
        fail("shards overlap")
    m = subprocess.run([memwall, "merge", "--out", merged, a, b], capture_output=True, text=True)
    if m.returncode != 0:
        fail(m.stderr)
    if open(merged).read() != open(full).read():
        fail("merged shards differ from the single sweep")
    print("2 shards merged equal the single sweep (6 points)")


def hdf5(memwall, tmp):
    import h5py
    import numpy as np
    path = write_sweep(tmp, "[2, 3, 8]")
    full, a, b, merged, resumed = (os.path.join(tmp, n) for n in ("full.h5", "a.h5", "b.h5", "m.h5", "r.h5"))
    for out, extra in ((full, []), (a, ["--shard", "1/2"]), (b, ["--shard", "2/2"]), (resumed, ["--shard", "1/2"])):
        if sweep(memwall, path, "--out", out, *extra).returncode != 0:
            fail(f"sweep {out} {extra} failed")
    if subprocess.run([memwall, "merge", "--out", merged, a, b], capture_output=True).returncode != 0:
        fail("merge of .h5 shards failed")
    p = sweep(memwall, path, "--resume", "--out", resumed)
    if p.returncode != 0 or "resuming: 3 point(s) already done" not in p.stderr:
        fail(f"resume into .h5 did not skip the done points: {p.stderr}")

    def table(path):
        with h5py.File(path, "r") as f:
            g = f["points"]
            return [c.decode() if isinstance(c, bytes) else c for c in g.attrs["columns"]], {k: g[k][()] for k in g}

    cols, want = table(full)
    if want["step_time_s"].dtype != np.float64 or len(want["point"]) != 6:
        fail("the .h5 results lack numeric columns or rows")
    for other in (merged, resumed):
        c, got = table(other)
        if c != cols or any(not np.array_equal(got[k], want[k]) for k in cols):
            fail(f"{os.path.basename(other)} differs from the single .h5 sweep")
    print(f"HDF5 results: 6 points, {len(cols)} columns; merged shards and a resumed sweep equal the single sweep")


PARITY = """
scenario:
  name: parity
  gpu: {like: A100-80GB, gemm_efficiency: EFF}
  model: {hidden: 4096, layers: 8, seq_len: 2048, vocab: 0}
  batch: {tokens_per_microbatch: 2048, microbatches: 1}
  cluster: {gpus: 8, fabric: {kind: star, bandwidth: 25GB/s}}
sweep:
  cluster.gpus: [8, 64]
report: {kind: squeeze, b_crit_tokens: 1e6}
"""


def parity(memwall, tmp):
    """The squeeze report's comm parity counts the fixed time in tokens at the achieved rate: with a
    GPU at half its peak on the GEMMs, T_fixed = t_fixed x (peak / 2) / (6 P), t_fixed the simulated
    all-reduce + optimizer (once: at peak, about 2x too high). P: 8 layers of 12 d^2."""
    params = 8 * 12 * 4096 ** 2
    for eff in (1.0, 0.5):
        path, out = os.path.join(tmp, "parity.yaml"), os.path.join(tmp, f"parity-{eff}.csv")
        open(path, "w").write(PARITY.replace("EFF", str(eff)))
        p = sweep(memwall, path, "--out", out)
        if p.returncode != 0:
            fail(f"parity sweep: {p.stderr}")
        printed = [float(x) for x in re.findall(r"comm parity at (\d+)", p.stdout)]
        for r, got in zip(rows(out), printed):
            t_fixed = float(r["t_allreduce_s"]) + float(r["t_optimizer_s"])
            want = t_fixed * 312e12 * eff / (6 * params)  # A100: 312 TFLOP/s BF16 dense
            if abs(got - want) > 0.5 + 1e-6 * want:
                fail(f"efficiency {eff}, {r['cluster.gpus']} GPUs: parity {got}, derived {want:.1f}")
        if len(printed) != 2:
            fail(f"parity report: {p.stdout}")
        # A sweep's results carry what a reader needs per point (once missing): throughput, MFU, the
        # collective used and the step's breakdown, which sums to the step time.
        for r in rows(out):
            for key in ("tokens_per_s_per_gpu", "mfu", "hfu", "collective", "channels", "breakdown_wait_s"):
                if r.get(key, "") == "":
                    fail(f"sweep results lack {key}: {sorted(r)[:8]}...")
            parts = sum(float(v) for k, v in r.items() if k.startswith("breakdown_"))
            if abs(parts / float(r["step_time_s"]) - 1) > 1e-9:
                fail(f"point {r['point']}: breakdown columns sum to {parts}, step {r['step_time_s']}")
            if r["collective"] != "ring":
                fail(f"collective column {r['collective']!r}, the scenario's star ring expected")
    print("squeeze parity at the achieved GEMM rate, as derived")


def main():
    memwall, mode = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        {"broken": broken, "resume": resume, "shards": shards, "hdf5": hdf5, "parity": parity}[mode](memwall, tmp)
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
