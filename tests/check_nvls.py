#!/usr/bin/env python3
"""NVLink SHARP (NCCL's NVLS, issue 27) against figures derived by hand, not from memwall's output.

NVLS all-reduce of S bytes over n GPUs of one NVLink domain: each GPU's port to the NVSwitches
carries S (n + 1) / n each way (the switch pulls every GPU's share of each reduced shard, then
multicasts each reduced shard to all), at eta = sharp_efficiency of NVLink's data rate B (NCCL's
nvlsEfficiency: 0.85 on Hopper). NCCL's tuner gives the call 25 us of latency (Simple only). So

  T_nvls = 25 us + route latency + S (n + 1) / n / (eta B)

and against the ring's 2 (n - 1) / n S / B the bandwidth-bound speed-up is 2 (n - 1) eta / (n + 1):
1.322 for 8 H100 (NCCL's measured 482 GB/s against the ring's ~370: 1.30).

Checks:
1. collbench on DGX H100 (B = 450 GB/s x 0.824, two 0.3 us links GPU-switch-GPU): 1 GiB NVLS time.
2. The NVLS / ring speed-up at 16 GiB (Simple): the ratio of the two derived times.
3. The tuner: 8 B runs the LL ring (NVLS's 25 us loses), 1 GiB runs NVLS; on DGX A100 (no SHARP)
   and across two H100 servers it never runs NVLS.
4. Pure data parallelism (`collective: nvls`, 8 H100, no overlap): the gradient all-reduce takes
   the bytes the model gives, and bytes sent per GPU are (n + 1) / n / eta of the gradients, where
   the ring's are 2 (n - 1) / n (conservation: same gradients, the two factors' ratio).
5. Bad input exits 2 naming the flag or file:line:key: nvls without SHARP, across servers, with
   LL; sharp on a star, sharp_efficiency without sharp or of 0; collective nvls on A100.

Usage: check_nvls.py MEMWALL TOPOLOGIES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

US, GB, GIB = 1e-6, 1e9, 2 ** 30
failures = []
B_H100 = 450 * 0.824 * GB  # NVLink data rate per direction, dgx-h100-ndr.yaml
ETA = 0.85


def run(memwall, *args):
    r = subprocess.run([memwall, *args, "--json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        failures.append(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
        return None
    return json.loads(r.stdout)


def near(label, got, expected, tolerance):
    err = got / expected - 1
    print(f"{label:64s} {got:12.6g}  expected {expected:12.6g}  {100 * err:+7.3f}% (allowed {100 * tolerance:g}%)")
    if abs(err) > tolerance:
        failures.append(f"{label}: {got:.6g}, expected {expected:.6g} ({100 * err:+.3f}%)")


def nvls_time_s(n, size, beta, eta, latency_s=25 * US):
    return latency_s + 0.6 * US + size * (n + 1) / n / (eta * beta)


def check_collbench(memwall, topologies):
    h100 = os.path.join(topologies, "dgx-h100-ndr.yaml")
    r = run(memwall, "collbench", h100, "--gpus", "8", "--sizes", "1GiB", "--algo", "nvls")
    if r:
        near("NVLS 1 GiB, 8 H100: time (us)", r["rows"][0]["time_us"], nvls_time_s(8, GIB, B_H100, ETA) / US, 0.001)
    size = 16 * GIB
    nv = run(memwall, "collbench", h100, "--gpus", "8", "--sizes", "16GiB", "--algo", "nvls")
    ring = run(memwall, "collbench", h100, "--gpus", "8", "--sizes", "16GiB", "--algo", "ring", "--protocol", "simple")
    if nv and ring:
        ring_s = 8.4 * US + 14 * 3.4 * US + 2 * 7 / 8 * size / B_H100  # one server: every step on NVLink
        near("NVLS / ring speed-up, 16 GiB, 8 H100", ring["rows"][0]["time_us"] / nv["rows"][0]["time_us"],
             ring_s / nvls_time_s(8, size, B_H100, ETA), 0.001)
        print(f"  bandwidth-bound speed-up 2 (n - 1) eta / (n + 1) = {2 * 7 * ETA / 9:.4f}")
    r = run(memwall, "collbench", h100, "--gpus", "8", "--sizes", "8B,1GiB")
    if r:
        small, large = r["rows"]
        if (small["algorithm"], small["protocol"]) != ("ring", "ll") or large["algorithm"] != "nvls":
            failures.append(f"tuner on 8 H100: 8 B ran {small['algorithm']}/{small['protocol']}, 1 GiB ran "
                            f"{large['algorithm']} (expected the LL ring, then nvls)")
    for fabric, gpus in (("dgx-a100-hdr.yaml", "8"), ("dgx-h100-ndr.yaml", "16")):
        r = run(memwall, "collbench", os.path.join(topologies, fabric), "--gpus", gpus, "--sizes", "8B:16GiB",
                "--factor", "16")
        if r and any(row["algorithm"] == "nvls" for row in r["rows"]):
            failures.append(f"tuner ran nvls on {gpus} GPUs of {fabric}")


SCENARIO = """name: nvls-dp
gpu: H100-SXM
model: {{hidden: 4096, layers: 32, seq_len: 2048, vocab: 50000}}
batch: {{tokens_per_microbatch: 2048, microbatches: 1}}
training: {{overlap: none}}
cluster: {{gpus: 8, collective: {collective}, fabric: {fabric}}}
"""


def check_engine(memwall, topologies, tmp):
    results = {}
    for collective in ("ring", "nvls"):
        path = os.path.join(tmp, f"dp-{collective}.yaml")
        open(path, "w").write(SCENARIO.format(collective=collective,
                                              fabric=os.path.join(topologies, "dgx-h100-ndr.yaml")))
        results[collective] = run(memwall, "run", path)
    ring, nv = results["ring"], results["nvls"]
    if not (ring and nv):
        return
    n = 8
    gradient_bytes = ring["bytes_sent_per_gpu"] / (2 * (n - 1) / n)  # the ring's own conservation law
    near("engine: NVLS bytes sent per GPU, (n + 1) / n / eta of the gradients", nv["bytes_sent_per_gpu"],
         gradient_bytes * (n + 1) / n / ETA, 1e-9)
    near("engine: NVLS gradient all-reduce time (s)", nv["t_allreduce_s"],
         nvls_time_s(n, gradient_bytes, B_H100, ETA, latency_s=0), 0.005)


BAD = [  # (arguments, what the error names)
    (["collbench", "dgx-a100-hdr", "--gpus", "8", "--algo", "nvls"], "SHARP"),
    (["collbench", "dgx-h100-ndr", "--gpus", "16", "--algo", "nvls"], "one NVLink domain"),
    (["collbench", "dgx-h100-ndr", "--gpus", "8", "--algo", "nvls", "--protocol", "ll"], "simple"),
]

BAD_FILES = {  # name: (text, line, key)
    "sharp-on-star": ("collbench: {op: all_reduce, gpus: 8, sizes: '1MiB',\n"
                      "  fabric: {kind: star, bandwidth: 100GB/s, sharp: true}}\n", 2, "collbench.fabric.sharp"),
    "efficiency-alone": ("collbench:\n  op: all_reduce\n  gpus: 8\n  sizes: '1MiB'\n  fabric:\n    kind: nvlink-node\n"
                         "    bandwidth: 450GB/s\n    sharp_efficiency: 0.8\n", 8, "sharp_efficiency"),
    "efficiency-zero": ("collbench:\n  op: all_reduce\n  gpus: 8\n  sizes: '1MiB'\n  fabric:\n    kind: nvlink-node\n"
                        "    bandwidth: 450GB/s\n    sharp: true\n    sharp_efficiency: 0\n", 9, "sharp_efficiency"),
    "scenario-a100": (SCENARIO.format(collective="nvls", fabric="dgx-a100-hdr"), 6, "cluster.collective"),
}


def check_bad_input(memwall, tmp):
    cases = [(args, None, key) for args, key in BAD]
    for name, (text, line, key) in BAD_FILES.items():
        path = os.path.join(tmp, name + ".yaml")
        open(path, "w").write(text)
        cases.append((["run" if name.startswith("scenario") else "collbench", path], f"{path}:{line}", key))
    out = os.path.join(tmp, "never.csv")
    for args, where, key in cases:
        r = subprocess.run([memwall, *args, "--out", out] if args[0] == "collbench" else [memwall, *args],
                           capture_output=True, text=True, timeout=60)
        err = r.stderr.strip()
        problems = []
        if r.returncode != 2:
            problems.append(f"exit {r.returncode}, expected 2")
        if where and f"{where}: " not in err:
            problems.append(f"error does not name {where}: {err!r}")
        if key not in err:
            problems.append(f"error does not name {key}: {err!r}")
        if r.stdout.strip() or os.path.exists(out):
            problems.append("printed or wrote output despite the error")
        print(f"bad input {' '.join(args)[-56:]:56s} exit {r.returncode}: {err.splitlines()[0][:110] if err else ''}")
        failures.extend(f"{' '.join(args)}: {p}" for p in problems)


def main():
    memwall, topologies = sys.argv[1], os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        check_collbench(memwall, topologies)
        check_engine(memwall, topologies, tmp)
        check_bad_input(memwall, tmp)
    if failures:
        sys.exit("FAIL:\n" + "\n".join(failures))
    print("all NVLS checks passed")


if __name__ == "__main__":
    main()
