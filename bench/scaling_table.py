#!/usr/bin/env python3
"""Scaling table (issue 17): wall time and peak memory of memwall against the GPU count, per benchmark
family, with the fitted exponent of time against N (least squares on log t = a + k log N).

Families: the 7B pure data-parallel ring on the 25 GB/s star (the worked example's 64-GPU IB row at N
GPUs, one micro-batch); the same with ~50 DDP buckets overlapped (bench/scaling/star-7b-overlap.yaml);
Llama-3 8B ZeRO-1 bucketed on DGX H100 with `collective: auto`
(bench/scaling/llama3-8b-dgx-h100-auto.yaml); `memwall topo topologies/dgx-h100-ndr.yaml --gpus N`.
A run past --timeout is shown as such and ends its family (larger N would take longer still).

Usage: bench/scaling_table.py [--build build] [--gpus 1024,2048,4096,8192,16384] [--timeout 300]
                              [--only FAMILY] [--repeat K]
"""
import argparse
import math
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def families(build):
    bench = os.path.join(build, "bench", "bench_scale")
    memwall = os.path.join(build, "memwall")
    return {
        "dp-ring-star": lambda n: [bench, os.path.join(ROOT, "scenarios/worked-example/4-ib-64.yaml"), str(n), "1"],
        "dp-overlap-star": lambda n: [bench, os.path.join(ROOT, "bench/scaling/star-7b-overlap.yaml"), str(n), "1"],
        "dgx-h100-auto": lambda n: [bench, os.path.join(ROOT, "bench/scaling/llama3-8b-dgx-h100-auto.yaml"), str(n),
                                    "1"],
        "topo-dgx-h100": lambda n: [memwall, "topo", os.path.join(ROOT, "topologies/dgx-h100-ndr.yaml"), "--gpus",
                                    str(n)],
    }


def measure(argv, timeout):
    """(wall seconds, peak RSS MiB) of one run, or None past the timeout."""
    start = time.monotonic()
    # Its own session, so that a timeout stops the run itself, not only /usr/bin/time above it (an
    # orphaned run would go on eating a core and slow every later measurement).
    p = subprocess.Popen(["/usr/bin/time", "-f", "peak_rss_kb=%M", *argv], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None
    wall = time.monotonic() - start
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {stderr[-500:]}")
    rss = re.search(r"peak_rss_kb=(\d+)", stderr)
    return wall, (int(rss.group(1)) / 1024 if rss else float("nan"))


def exponent(points):
    if len(points) < 2:
        return float("nan")
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--gpus", default="1024,2048,4096,8192,16384")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", default="", help="run only the families whose name contains this")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per point, the fastest kept (a shared machine's other load only slows a run)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.gpus.split(",")]
    print(f"{'family':18} " + " ".join(f"{n:>16}" for n in sizes) + f" {'exponent':>9}")
    for name, command in families(args.build).items():
        if args.only not in name:
            continue
        cells, points = [], []
        for n in sizes:
            if cells and cells[-1].startswith(">"):
                cells.append("-")
                continue
            runs = []
            for _ in range(max(1, args.repeat)):
                r = measure(command(n), args.timeout)
                if r is None:
                    break
                runs.append(r)
            r = min(runs) if len(runs) == max(1, args.repeat) else None
            if r is None:
                cells.append(f">{args.timeout:.0f} s")
                continue
            cells.append(f"{r[0]:6.1f} s {r[1]:5.0f} MiB")
            points.append((n, r[0]))
        print(f"{name:18} " + " ".join(f"{c:>16}" for c in cells) + f" {exponent(points):9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
