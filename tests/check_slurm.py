#!/usr/bin/env python3
"""`memwall sweep --slurm` end to end on a real SLURM: a single-node cluster started by the test
(tests/slurm/local_cluster.py: munged, slurmctld and slurmd from Debian's packages, in a temporary
directory), stopped at the end whatever happens.

1. An 8-point sweep submitted as 4 array tasks and a merge job: the merged results equal the same
   sweep run locally, value for value.
2. The same sweep submitted held, one task cancelled (scancel) before it runs, the rest released: the
   merge reports that task's missing points and fails; the same command again submits only that
   task (and the merge), and the merged results then equal the local run.
3. A layout plan (`memwall plan --slurm`): its 4 simulated layouts as 2 array tasks; the merge job
   joins them and prints the plan's report; the merged results equal the plan run locally.
4. No daemon the test started is left, nor its directory.

Usage: check_slurm.py MEMWALL
"""
import csv
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "slurm"))
from local_cluster import LocalCluster  # noqa: E402

SWEEP = """
scenario:
  name: slurm sweep
  gpu: A100-80GB
  model: {hidden: 2048, layers: 8, seq_len: 1024, vocab: 1000}
  batch: {tokens_per_microbatch: 1024, microbatches: 2}
  cluster: {gpus: 4, fabric: {kind: star, bandwidth: 25GB/s}}
sweep:
  cluster.gpus: [2, 4, 8, 16]
  batch.microbatches: [1, 4]
"""


PLAN = """
base: {base}
search:
  tensor: [1, 2]
  micro_batch: [4, 8, 16]
top: 4
""".format(base=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenarios",
                             "validation-megatron", "01-gpt-1p7b-32gpu.yaml"))


def fail(msg, cluster=None):
    print("FAIL:", msg)
    if cluster:
        print(cluster.logs())
    sys.exit(1)


def rows(path):
    return list(csv.DictReader(open(path)))


def job_state(cluster, job):
    p = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, env=cluster.env)
    for word in p.stdout.split():
        if word.startswith("JobState="):
            return word.split("=", 1)[1]
    return "UNKNOWN"


def wait_job(cluster, job, timeout_s=90):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = job_state(cluster, job)
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"):
            return state
        time.sleep(0.5)
    fail(f"job {job} did not end within {timeout_s} s (state {job_state(cluster, job)})", cluster)


def submit(memwall, cluster, sweep, out, *extra):
    p = subprocess.run([memwall, "sweep", sweep, "--out", out, "--slurm", "--shards", "4", *extra],
                       capture_output=True, text=True, env=cluster.env)
    if p.returncode != 0:
        fail(f"--slurm submission exited {p.returncode}: {p.stderr}", cluster)
    return p.stdout.split(), p.stderr


def same(a_path, b_path, cluster):
    a, b = rows(a_path), rows(b_path)
    if len(a) != 8 or len(b) != 8:
        fail(f"expected 8 rows each, got {len(a)} and {len(b)}", cluster)
    for x, y in zip(a, b):
        if x != y:
            diff = {k: (x[k], y[k]) for k in x if x[k] != y[k]}
            fail(f"point {x['point']} differs between SLURM and the local run: {diff}", cluster)


def main():
    memwall = os.path.abspath(sys.argv[1])
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        sweep = os.path.join(tmp, "sweep.yaml")
        open(sweep, "w").write(SWEEP)
        local = os.path.join(tmp, "local.csv")
        p = subprocess.run([memwall, "sweep", sweep, "--out", local], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"the local sweep failed: {p.stderr}")
        with LocalCluster() as cluster:
            pids, cluster_dir = cluster.pids(), cluster.dir
            print(f"cluster up in {time.monotonic() - start:.1f} s (daemons {pids})")

            # 1. Four tasks and a merge.
            out = os.path.join(tmp, "slurm.csv")
            ids, _ = submit(memwall, cluster, sweep, out)
            if len(ids) != 2:
                fail(f"expected the array and merge job ids on stdout, got {ids}", cluster)
            state = wait_job(cluster, ids[1])
            if state != "COMPLETED":
                fail(f"merge job {ids[1]} ended {state}: {open(out + '.slurm/merge.out').read()}", cluster)
            shards = sorted(f for f in os.listdir(out + ".slurm") if f.startswith("shard-"))
            if shards != ["shard-1.csv", "shard-2.csv", "shard-3.csv", "shard-4.csv"]:
                fail(f"expected four shards, found {shards}", cluster)
            same(out, local, cluster)
            print(f"4 array tasks + merge: merged results = the local sweep, 8 points value for value "
                  f"({time.monotonic() - start:.1f} s)")

            # 2. One task cancelled before it runs; the merge names it; a resubmission completes it.
            out2 = os.path.join(tmp, "cancelled.csv")
            ids, _ = submit(memwall, cluster, sweep, out2, "--sbatch-args", "--hold")
            array, merge = ids
            subprocess.run(["scancel", f"{array}_2"], check=True, env=cluster.env)
            subprocess.run(["scontrol", "release", f"{array},{merge}"], capture_output=True, env=cluster.env)
            state = wait_job(cluster, merge)
            log = open(out2 + ".slurm/merge.out").read()
            if state != "FAILED" or "2 point(s) missing" not in log or "task 2 of 4: 1, 5" not in log:
                fail(f"the merge after a cancelled task ended {state} and said:\n{log}", cluster)
            print("a cancelled task: the merge fails naming its points (task 2 of 4: 1, 5)")
            ids, err = submit(memwall, cluster, sweep, out2)
            if "tasks 2 of 4" not in err or len(ids) != 2:
                fail(f"the resubmission did not submit task 2 alone: {err}", cluster)
            state = wait_job(cluster, ids[1])
            if state != "COMPLETED":
                fail(f"merge job {ids[1]} after the resubmission ended {state}", cluster)
            same(out2, local, cluster)
            print(f"resubmitted: only task 2 ran, merged results = the local sweep ({time.monotonic() - start:.1f} s)")
            # 3. A plan.
            plan = os.path.join(tmp, "plan.yaml")
            open(plan, "w").write(PLAN)
            plan_local = os.path.join(tmp, "plan-local.csv")
            p = subprocess.run([memwall, "plan", plan, "--out", plan_local], capture_output=True, text=True)
            if p.returncode != 0:
                fail(f"the local plan failed: {p.stderr}")
            plan_out = os.path.join(tmp, "plan-slurm.csv")
            p = subprocess.run([memwall, "plan", plan, "--out", plan_out, "--slurm", "--shards", "2"],
                               capture_output=True, text=True, env=cluster.env)
            if p.returncode != 0 or len(p.stdout.split()) != 2:
                fail(f"plan --slurm: exit {p.returncode}: {p.stderr}", cluster)
            merge = p.stdout.split()[1]
            state = wait_job(cluster, merge)
            log = open(plan_out + ".slurm/merge.out").read()
            if state != "COMPLETED" or "best on dgx-a100-hdr" not in log:
                fail(f"the plan's merge job ended {state}:\n{log}", cluster)
            a, b = rows(plan_local), rows(plan_out)
            if len(a) != 4 or a != b:
                fail(f"plan results differ between SLURM and the local run ({len(a)} vs {len(b)} rows)", cluster)
            print(f"plan --slurm: 2 tasks + merge and report; merged = the local plan, 4 layouts value for value "
                  f"({time.monotonic() - start:.1f} s)")
        left = [pid for pid in pids if os.path.exists(f"/proc/{pid}")]
        stray = subprocess.run(["pgrep", "-f", cluster_dir], capture_output=True, text=True).stdout.split()
        if left or stray or os.path.exists(cluster_dir):
            fail(f"left behind: daemons {left}, processes {stray}, directory {os.path.exists(cluster_dir)}")
        print(f"daemons {pids} stopped, {cluster_dir} removed; {time.monotonic() - start:.1f} s in all")
    print("ok")


if __name__ == "__main__":
    main()
