#!/usr/bin/env python3
"""Scaling table (issue 17): wall time and peak memory of memwall against the GPU count, per benchmark
family, with the fitted exponent of time against N (least squares on log t = a + k log N).

Families: the 7B pure data-parallel ring on the 25 GB/s star (the worked example's 64-GPU IB row at N
GPUs, one micro-batch); the same with ~50 DDP buckets overlapped (bench/scaling/star-7b-overlap.yaml);
Llama-3 8B ZeRO-1 bucketed on DGX H100 with `collective: auto`
(bench/scaling/llama3-8b-dgx-h100-auto.yaml); `memwall topo topologies/dgx-h100-ndr.yaml --gpus N`.
A run past --timeout is shown as such and ends its family (larger N would take longer still).

--auto-cost instead prints what `collective: auto` costs against naming the algorithm it picks (the
DGX H100 family run both ways, alternately, the fastest of --repeat runs each; issue 17: at most 10%).

Usage: bench/scaling_table.py [--build build] [--gpus 1024,2048,4096,8192,16384] [--timeout 300]
                              [--only FAMILY] [--repeat K] [--auto-cost]
"""
import argparse
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
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


def measure(argv, timeout, stderr_out=None):
    """(wall seconds, peak RSS MiB) of one run, or None past the timeout. stderr_out: a list that
    receives the run's standard error."""
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
    if stderr_out is not None:
        stderr_out.append(stderr)
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


AUTO_SCENARIO = os.path.join(ROOT, "bench/scaling/llama3-8b-dgx-h100-auto.yaml")


def auto_cost(args, sizes):
    """Per N: `auto`'s wall time against the same scenario naming the algorithm auto picks."""
    bench = os.path.join(args.build, "bench", "bench_scale")
    with open(AUTO_SCENARIO) as f:
        text = f.read()
    if "collective: auto" not in text:
        raise RuntimeError(f"{AUTO_SCENARIO} no longer says 'collective: auto'")
    print(f"{'GPUs':>7} {'auto':>8} {'picked':>18} {'named':>8} {'auto costs':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            err = []
            first = measure([bench, AUTO_SCENARIO, str(n), "1"], args.timeout, err)
            picked = re.search(r"collective auto chose (\S+)", err[-1]) if first else None
            if not picked:
                print(f"{n:>7} {'>' + str(int(args.timeout)) + ' s' if not first else 'no choice printed':>8}")
                continue
            named = os.path.join(tmp, f"named-{n}.yaml")
            with open(named, "w") as f:
                f.write(text.replace("collective: auto", f"collective: {picked.group(1)}"))
            auto_runs, named_runs = [first[0]], []
            for k in range(max(1, args.repeat)):  # alternating, so a slow spell of the machine hits both
                r = measure([bench, named, str(n), "1"], args.timeout)
                named_runs.append(r[0] if r else float("inf"))
                if k + 1 < max(1, args.repeat):
                    r = measure([bench, AUTO_SCENARIO, str(n), "1"], args.timeout)
                    auto_runs.append(r[0] if r else float("inf"))
            a, b = min(auto_runs), min(named_runs)
            print(f"{n:>7} {a:7.2f}s {picked.group(1):>18} {b:7.2f}s {100 * (a / b - 1):+10.1f}%", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--gpus", default="1024,2048,4096,8192,16384")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--only", default="", help="run only the families whose name contains this")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per point, the fastest kept (a shared machine's other load only slows a run)")
    ap.add_argument("--auto-cost", action="store_true",
                    help="auto against the algorithm it picks, instead of the families")
    args = ap.parse_args()
    sizes = [int(x) for x in args.gpus.split(",")]
    if args.auto_cost:
        return auto_cost(args, sizes)
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
