#!/usr/bin/env python3
"""`memwall collbench` against figures derived by hand from the fabric files and NCCL's protocol
table (sim/collectives/protocol.hpp, from NCCL src/graph/tuning.cc), not from memwall's output:

1. NCCL's channels: on DGX A100 + HDR (k = 8 NICs per server, NVLink 300 GB/s x 0.8; NIC 25 GB/s x
   0.96) a flat ring all-reduce of 1 GB (Simple) over 2, 4 and 16 servers has bus bandwidth within 5%
   of min(NVLink x k/(k-1), k x NIC) = 192 GB/s times the ring's efficiency, the share of its time
   that moves bytes:  T = base + 2 (n - 1) step + 2 (n - 1)/n S / beta,  step = the mean over the
   ring's hops of the protocol's step latency: (k - 1)/k of them NVLink (3.4 us), 1/k network (14 us).
2. One NIC per server (one channel): the same formula with beta = one NIC, 24 GB/s.
3. Conservation: a ring all-reduce sends 2 (n - 1) S bytes whatever the channels; every byte sent
   is received.
4. Latency: 8 B on one server's 8 GPUs, ring LL: 6.6 us + 14 x 0.6 us = 15.0 us; over two servers,
   NCCL's tree with LL: 6.8 us + 2 (7 x 0.6 us + 1 x 5 us) = 25.2 us.
5. The tuner picks LL for 8 B and Simple over the ring for 8 GiB.
6. All-gather on one server (NVLink bound, Simple): T = 8.4 us + 7 x 3.4 us + (7/8) S / 240 GB/s.
7. Bad input exits 2 naming the flag or file:line:key, printing and writing nothing.

Usage: check_collbench.py MEMWALL TOPOLOGIES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

US, GB = 1e-6, 1e9
failures = []


def collbench(memwall, *args):
    run = subprocess.run([memwall, "collbench", *args, "--json"], capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        failures.append(f"collbench {' '.join(args)}: exit {run.returncode}: {run.stderr.strip()}")
        return None
    return json.loads(run.stdout)


def near(label, got, expected, tolerance):
    err = got / expected - 1
    print(f"{label:62s} {got:12.5g}  expected {expected:12.5g}  {100 * err:+6.2f}% (allowed {100 * tolerance:g}%)")
    if abs(err) > tolerance:
        failures.append(f"{label}: {got:.6g}, expected {expected:.6g} ({100 * err:+.2f}%)")


def ring_time_s(n, size, beta, k):
    step_s = ((k - 1) * 3.4 + 14.0) / k * US
    return 8.4 * US + 2 * (n - 1) * step_s + 2 * (n - 1) / n * size / beta


def check_rings(memwall, topologies, tmp):
    a100 = os.path.join(topologies, "dgx-a100-hdr.yaml")
    size = 1e9
    beta = min(300 * 0.8 * 8 / 7, 8 * 25 * 0.96) * GB
    for servers in (2, 4, 16):
        n = 8 * servers
        r = collbench(memwall, a100, "--gpus", str(n), "--sizes", "1GB", "--algo", "ring", "--protocol", "simple")
        if r:
            t = ring_time_s(n, size, beta, 8)
            expected_busbw = 2 * (n - 1) / n * size / t
            print(f"  {servers} servers: the ring's efficiency {expected_busbw / beta:.3f} of {beta / GB:g} GB/s")
            near(f"8 channels, {servers} DGX A100, 1 GB ring busbw (GB/s)", r["rows"][0]["busbw_gb_per_s"],
                 expected_busbw / GB, 0.05)
    # One NIC per server: one channel, whose ring crosses each server boundary on that NIC.
    one_nic = os.path.join(tmp, "one-nic.yaml")
    text = open(a100).read().replace("nics: per-gpu", "nics: per-node")
    open(one_nic, "w").write(text)
    for servers in (2, 4):
        n = 8 * servers
        r = collbench(memwall, one_nic, "--gpus", str(n), "--sizes", "1GB", "--algo", "ring", "--protocol", "simple")
        if r:
            if r["channels"] != 1:
                failures.append(f"one NIC per server: {r['channels']} channels, expected 1")
            t = ring_time_s(n, size, 25 * 0.96 * GB, 8)
            near(f"1 NIC per server, {servers} servers, 1 GB ring busbw (GB/s)", r["rows"][0]["busbw_gb_per_s"],
                 2 * (n - 1) / n * size / t / GB, 0.05)
    # Conservation: the same bytes with 1 or 8 channels, 2 (n - 1) S of them, all received.
    n = 32
    for channels in ("1", "8"):
        r = collbench(memwall, a100, "--gpus", str(n), "--sizes", "1GB", "--algo", "ring", "--protocol", "simple",
                      "--channels", channels)
        if r:
            near(f"bytes sent, ring of {n} GPUs, {channels} channel(s)", r["bytes_sent"], 2 * (n - 1) * size, 1e-9)
            if r["bytes_received"] != r["bytes_sent"]:
                failures.append(f"{channels} channels: {r['bytes_sent']} bytes sent, {r['bytes_received']} received")


def check_latency_and_tuner(memwall, topologies):
    h100 = os.path.join(topologies, "dgx-h100-ndr.yaml")
    r = collbench(memwall, h100, "--gpus", "8", "--sizes", "8B", "--algo", "ring", "--protocol", "ll")
    if r:
        near("8 B, 8 GPUs, ring LL: 6.6 + 14 x 0.6 us", r["rows"][0]["time_us"], 6.6 + 14 * 0.6, 0.005)
    r = collbench(memwall, h100, "--gpus", "16", "--sizes", "8B", "--algo", "tree", "--protocol", "ll")
    if r:
        near("8 B, 2 servers, NCCL tree LL: 6.8 + 2 (7 x 0.6 + 5) us", r["rows"][0]["time_us"],
             6.8 + 2 * (7 * 0.6 + 5), 0.005)
    r = collbench(memwall, h100, "--gpus", "16", "--sizes", "8B,8GiB")
    if r:
        small, large = r["rows"]
        if small["protocol"] != "ll" or large["protocol"] != "simple" or large["algorithm"] != "ring":
            failures.append(f"tuner: 8 B ran {small['algorithm']}/{small['protocol']}, 8 GiB "
                            f"{large['algorithm']}/{large['protocol']} (expected LL, and Simple over the ring)")
    size = 2 ** 30
    r = collbench(memwall, h100, "--gpus", "8", "--op", "all_gather", "--sizes", "1GiB", "--protocol", "simple")
    if r:
        t = 8.4 * US + 7 * 3.4 * US + 7 / 8 * size / (450 * 0.824 * GB)
        near("all_gather 1 GiB, 8 H100, Simple: busbw (GB/s)", r["rows"][0]["busbw_gb_per_s"], 7 / 8 * size / t / GB,
             0.01)


BAD = [  # (arguments, where the error points, key or flag)
    (["dgx-h100-ndr", "--gpus", "8", "--channels", "0"], None, "--channels"),
    (["dgx-h100-ndr", "--gpus", "8", "--channels", "65"], None, "--channels"),
    (["dgx-h100-ndr", "--gpus", "8", "--op", "all_scatter"], "memwall collbench", "--op"),
    (["dgx-h100-ndr", "--gpus", "8", "--algo", "rings"], None, "--algo"),
    (["dgx-h100-ndr", "--gpus", "8", "--op", "all_gather", "--algo", "tree"], None, None),
    (["dgx-h100-ndr", "--gpus", "8", "--sizes", "1MiB:8B"], "memwall collbench", "--sizes"),
    (["dgx-h100-ndr", "--gpus", "8", "--sizes", "-8B:1MiB"], "memwall collbench", "--sizes"),
    (["dgx-h100-ndr", "--gpus", "8", "--sizes", ""], None, "--sizes"),
    (["no-such-fabric", "--gpus", "8"], None, None),
]

BAD_FILES = {  # name: (text, line, key)
    "channels-zero": "collbench: {fabric: dgx-h100-ndr, gpus: 8, op: all_reduce, sizes: '8B:1MiB',\n"
                     "  channels: 0}\n", 
    "unknown-op": "collbench:\n  fabric: dgx-h100-ndr\n  gpus: 8\n  op: allreduce\n  sizes: '8B:1MiB'\n",
    "unmeasured-size": "collbench: {fabric: dgx-h100-ndr, gpus: 8, op: all_reduce, sizes: '8B,1MiB'}\n"
                       "measured:\n  - {size: 2MiB, busbw: 100GB/s}\n",
}
BAD_FILE_WHERE = {"channels-zero": (2, "collbench.channels"), "unknown-op": (4, "collbench.op"),
                  "unmeasured-size": (3, "measured[0].size")}


def check_bad_input(memwall, tmp):
    out = os.path.join(tmp, "never.csv")
    cases = [(args, where, key) for args, where, key in BAD]
    for name, text in BAD_FILES.items():
        path = os.path.join(tmp, name + ".yaml")
        open(path, "w").write(text)
        line, key = BAD_FILE_WHERE[name]
        cases.append(([path], f"{path}:{line}", key))
    for args, where, key in cases:
        run = subprocess.run([memwall, "collbench", *args, "--out", out], capture_output=True, text=True, timeout=60)
        err = run.stderr.strip()
        problems = []
        if run.returncode != 2:
            problems.append(f"exit {run.returncode}, expected 2")
        lines = err.splitlines()
        # The argument parser's own errors add one line, "Run with --help for more information."
        if not lines or not lines[0].startswith("memwall: error: ") or len(lines) > 1 + (lines[1:] == [
                "Run with --help for more information."]):
            problems.append(f"not one error line: {err!r}")
        if where and f"{where}: " not in err:
            problems.append(f"error does not name {where}: {err!r}")
        if key and key not in err:
            problems.append(f"error does not name {key}: {err!r}")
        if run.stdout.strip() or os.path.exists(out):
            problems.append("printed or wrote output despite the error")
        print(f"bad input {' '.join(args)[-60:]:60s} exit {run.returncode}: {lines[0][:100] if lines else ''}")
        if os.path.exists(out):
            os.remove(out)
        failures.extend(f"collbench {' '.join(args)}: {p}" for p in problems)


def main():
    memwall, topologies = sys.argv[1], os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        check_rings(memwall, topologies, tmp)
        check_latency_and_tuner(memwall, topologies)
        check_bad_input(memwall, tmp)
    if failures:
        sys.exit("FAIL:\n" + "\n".join(failures))
    print("all collbench checks passed")


if __name__ == "__main__":
    main()
