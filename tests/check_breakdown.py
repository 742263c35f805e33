#!/usr/bin/env python3
"""The step breakdown adds up: every second of every GPU's step is in exactly one member.

Usage: check_breakdown.py MEMWALL shipped [--skip REGEX] | layouts

shipped: every scenario under scenarios/ that `memwall run` takes (not sweeps, plans or published/): `--json`'s
  `breakdown` members are all >= 0 and sum to `step_time_s` within 1e-9 relative. The members are
  accumulated independently per GPU (compute phases, exposed waits on each kind of communication,
  the pipeline's waits split at the moment the neighbour had the data, the optimizer) plus the time
  after the GPU's own end: a GPU's time recorded twice, or not at all, breaks the sum.
layouts: the same on each layout kind and feature, on small generated scenarios (DP, ZeRO-2,
  ZeRO-3/FSDP with and without overlap, bucketed DDP, TP, SP, PP, interleaved PP, CP, EP with a hot
  expert, a straggler, a link that goes down, a power cap), plus derived figures:
  - 1F1B over p stages of equal work on a fabric whose transfers take ~0: every stage waits
    (p - 1) forward+backward slots, so pp_bubble_s / compute_s = (p - 1) / m (within 1%);
  - a straggler at half speed in pure DP (DDP) without overlap: the others wait for it at the all-reduce
    and for its optimizer at the end, wait_s = (compute + optimizer of a GPU at full speed) x
    (N - 1) / N (within 1%);
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MEMBERS = ["compute_s", "tp_s", "cp_s", "ep_s", "pp_transfer_s", "pp_bubble_s", "dp_s", "optimizer_s", "wait_s"]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run_json(memwall, path):
    p = subprocess.run([memwall, "run", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{path}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    r = json.loads(p.stdout)
    return r[0] if isinstance(r, list) else r


def check_sums(label, r):
    b = r.get("breakdown")
    if not isinstance(b, dict) or sorted(b) != sorted(MEMBERS):
        fail(f"{label}: breakdown {b!r} lacks the members {MEMBERS}")
    for k, v in b.items():
        if not v >= -1e-12 * r["step_time_s"]:
            fail(f"{label}: breakdown {k} = {v} < 0")
    total = sum(b[k] for k in MEMBERS)
    if abs(total / r["step_time_s"] - 1) > 1e-9:
        fail(f"{label}: breakdown sums to {total!r}, step_time_s {r['step_time_s']!r} "
             f"({total - r['step_time_s']:+.3e} s): {b}")
    for key in ("mfu", "hfu", "tokens_per_s_per_gpu"):
        if not r.get(key, -1) > 0:
            fail(f"{label}: {key} = {r.get(key)}")
    if r["hfu"] < r["mfu"] * (1 - 1e-9):
        fail(f"{label}: hfu {r['hfu']} < mfu {r['mfu']} (hardware FLOPs include the model's)")
    return b


def shipped(memwall, skip):
    files = []
    for d, _, names in os.walk(os.path.join(ROOT, "scenarios")):
        for n in names:
            path = os.path.join(d, n)
            if not n.endswith(".yaml") or (skip and re.search(skip, os.path.relpath(path, ROOT))):
                continue
            if os.path.relpath(path, ROOT).startswith("scenarios/published/"):
                continue  # up to 16,384 GPUs, some refused: tests/check_published.py and bench/ run them
            if os.path.basename(d) == "jobs":
                continue  # a jobs file's job without its fabric: checked through the jobs file below
            text = open(path).read()
            if re.search(r"^(base|sweep|fabrics|search|collbench):", text, re.M):
                continue  # a sweep, a plan or a collbench case: `memwall run` refuses it
            files.append(path)
    files.sort()
    with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
        for path, r in zip(files, pool.map(lambda f: run_json(memwall, f), files)):
            if "jobs" in r and "cluster" in r:  # several jobs on one fabric: every job's breakdown
                for job in r["jobs"]:
                    check_sums(f"{os.path.relpath(path, ROOT)} job {job['job']}", job)
            else:
                check_sums(os.path.relpath(path, ROOT), r)
    print(f"ok: {len(files)} shipped scenarios, breakdown sums to the step within 1e-9")


BASE = """name: "{name}"
gpu: {gpu}
model: {{hidden: 1024, layers: {layers}, heads: 16, seq_len: 2048, vocab: 32000{moe}}}
batch: {{global_batch: {batch}, micro_batch: 1}}
cluster: {{gpus: {gpus}, fabric: {fabric}{cluster}}}
training: {{{training}}}
{extra}
"""


def scenario(tmp, name, gpus=16, layers=8, batch=64, gpu="H100-SXM", moe="", fabric="dgx-h100-ndr", cluster="",
             training="sharding: zero1", extra=""):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(BASE.format(name=name, gpu=gpu, layers=layers, batch=batch, gpus=gpus, moe=moe, fabric=fabric,
                            cluster=cluster, training=training, extra=extra))
    return path


def layouts(memwall):
    moe = ", moe: {experts: 8, top_k: 2, imbalance: 1.5, expert_ffn_hidden: 2048}"
    cases = {
        "dp": {},
        "dp-bucketed": {"training": "sharding: zero1, overlap: bucketed, bucket: 4MB"},
        "zero2": {"training": "sharding: zero2"},
        "fsdp": {"training": "sharding: zero3"},
        "fsdp-overlap": {"training": "sharding: zero3, overlap: bucketed"},
        "hierarchical": {"cluster": ", collective: hierarchical"},
        "tp": {"extra": "parallelism: {tensor: 4}"},
        "tp-sp": {"extra": "parallelism: {tensor: 4, sequence_parallel: true}"},
        "tp16-two-servers": {"gpus": 32, "extra": "parallelism: {tensor: 16}"},
        "pp": {"extra": "parallelism: {pipeline: 4}"},
        "pp-interleaved": {"extra": "parallelism: {pipeline: 2, virtual_stages: 2}"},
        "tp-pp": {"extra": "parallelism: {tensor: 2, pipeline: 2}"},
        "cp": {"extra": "parallelism: {context: 2}"},
        "ep": {"moe": moe, "extra": "parallelism: {expert: 8}"},
        "ep-tp-pp": {"moe": moe, "gpus": 32, "extra": "parallelism: {tensor: 2, expert: 4, pipeline: 2}"},
        "straggler-pp": {"cluster": ", stragglers: [{gpu: 5, speed: 0.7}]", "extra": "parallelism: {pipeline: 2}"},
        "link-down": {"cluster": ", link_events: [{at: 0.01s, link: gpu000003-nic, down: true}]"},
        "power-cap": {"gpu": "{like: H100-SXM, power_limit: 400}"},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name, kw in cases.items():
            check_sums(name, run_json(memwall, scenario(tmp, name, **kw)))
        print(f"ok: {len(cases)} layout kinds and features sum to the step within 1e-9")

        # The same breakdown as `memwall run --breakdown`'s table (4 significant digits printed).
        paths = [os.path.join(tmp, n + ".yaml") for n in ("pp", "ep")]
        p = subprocess.run([memwall, "run", "--breakdown", *paths], capture_output=True, text=True)
        lines = p.stdout.strip().splitlines()
        if p.returncode != 0 or len(lines) != 3 or lines[0].split()[-10:] != [
                "compute", "TP", "CP", "EP", "PP", "xfer", "bubble", "DP", "optimizer", "wait"]:
            fail(f"memwall run --breakdown: exit {p.returncode}: {p.stdout!r} {p.stderr!r}")
        for path, line in zip(paths, lines[1:]):
            r = run_json(memwall, path)
            printed = [float(x) for x in line.split()[-10:]]
            want = [r["step_time_s"]] + [r["breakdown"][k] for k in MEMBERS]
            for got, w in zip(printed, want):
                if abs(got - w) > 5e-4 * max(abs(w), 1e-12) + 1e-12:
                    fail(f"--breakdown row {line!r} differs from --json {want}")
        print("ok: memwall run --breakdown prints --json's breakdown")

        # 1F1B bubble, derived: m micro-batches over p stages of equal work (no LM head, a tiny
        # vocabulary; transfers on a 100 TB/s star take ~0): (p - 1) / m of the compute.
        p, m = 4, 16
        path = scenario(tmp, "bubble", gpus=p, layers=8, batch=m, fabric="{kind: star, bandwidth: 100000GB/s, latency: 0s}",
                        extra=f"parallelism: {{pipeline: {p}}}")
        text = open(path).read().replace("vocab: 32000", "vocab: 8")
        open(path, "w").write(text)
        b = check_sums("bubble", run_json(memwall, path))
        want = (p - 1) / m
        got = b["pp_bubble_s"] / b["compute_s"]
        if abs(got / want - 1) > 0.01:
            fail(f"1F1B p={p} m={m}: bubble / compute = {got:.5f}, derived (p-1)/m = {want:.5f}")
        print(f"ok: 1F1B bubble / compute {got:.5f} vs (p-1)/m {want:.5f}")

        # A straggler at half speed, 8 GPUs, pure DP (DDP: one all-reduce, then the optimizer), one
        # NVLink server, no overlap: its compute takes twice as long; the 7 others wait that extra
        # time: mean wait = c x 7/8. (zero1 splits the all-reduce around the sharded optimizer: the
        # ring's first rounds then progress among the others while they wait, blurring the figure.)
        n = 8
        path = scenario(tmp, "straggler", gpus=n, batch=8, cluster=", stragglers: [{gpu: 2, speed: 0.5}]",
                        training="sharding: none")
        r = run_json(memwall, path)
        b = check_sums("straggler", r)
        path0 = scenario(tmp, "nostraggler", gpus=n, batch=8, training="sharding: none")
        b0 = check_sums("nostraggler", run_json(memwall, path0))
        c = b0["compute_s"]
        want = c * (n - 1) / n
        want += b0["optimizer_s"] * (n - 1) / n  # its optimizer runs at half speed too: they wait at the end
        if abs(b["wait_s"] / want - 1) > 0.01:
            fail(f"straggler: wait_s {b['wait_s']:.6f}, derived c (N-1)/N = {want:.6f}")
        if b0["wait_s"] > 1e-12:
            fail(f"identical GPUs wait {b0['wait_s']} s")
        print(f"ok: straggler wait {b['wait_s']:.6f} s vs derived {want:.6f} s")


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    memwall, mode = sys.argv[1], sys.argv[2]
    if mode == "shipped":
        skip = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--skip" else None
        shipped(memwall, skip)
    elif mode == "layouts":
        layouts(memwall)
    else:
        fail(__doc__)


if __name__ == "__main__":
    main()
