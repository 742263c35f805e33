#!/usr/bin/env python3
"""Predicted vs measured throughput for the published runs in scenarios/validation (or another
folder): runs `memwall run --json` on them and prints a markdown table with each error.
With --nccl: the published nccl-tests results in scenarios/validation-nccl (or DIR), through
`memwall collbench FILE --json`: every measured row, large messages (>= 256 MB) by bus bandwidth
(within --nccl-large, default 15%), small ones (<= 64 KiB) by time (within --nccl-small, 30%);
exit 1 when more than --max-misses rows (default 0) are outside their bound.

Usage: validation_table.py [--memwall build/memwall] [DIR] [--max-error 0.10] [--min-share 1] [--worst E]
                           [--plot FILE.png] [--only REGEX] [-j N]
--only keeps the scenario files whose names match; -j runs them in N processes (rows stay in name order).
Exit status 1 when fewer than --min-share of the runs (default: all) are within --max-error, or when
any run is off by more than --worst (the ctest checks); 0 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def plot(rows, band, path):
    sys.path.insert(0, HERE)
    import figure_style
    plt = figure_style.plt
    fig, ax = plt.subplots(figsize=(6, 6))
    # One marker per source (the folder a run comes from), one colour per GPU profile within it.
    markers = "osD^vP*X"
    sources = sorted({r["source_dir"] for r in rows})
    for gpu in sorted({r["gpu"] for r in rows}):
        for i, source in enumerate(sources):
            mine = [r for r in rows if r["gpu"] == gpu and r["source_dir"] == source]
            if mine:
                label = gpu if len(sources) == 1 else f"{source}: {gpu}"
                ax.scatter([r["measured_tokens_per_s_per_gpu"] for r in mine],
                           [r["tokens_per_s_per_gpu"] for r in mine], label=label, s=18,
                           marker=markers[i % len(markers)])
    lo = min(min(r["measured_tokens_per_s_per_gpu"], r["tokens_per_s_per_gpu"]) for r in rows) / 1.3
    hi = max(max(r["measured_tokens_per_s_per_gpu"], r["tokens_per_s_per_gpu"]) for r in rows) * 1.3
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8, label="predicted = measured")
    ax.fill_between([lo, hi], [lo * (1 - band), hi * (1 - band)], [lo * (1 + band), hi * (1 + band)],
                    color="grey", alpha=0.2, label=f"within {100 * band:.0f}%")
    ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi), xlabel="measured tokens/s/GPU",
           ylabel="memwall tokens/s/GPU", title=f"{len(rows)} published runs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    figure_style.save(fig, path, dpi=120)
    print(f"wrote {path}")


LARGE_BYTES, SMALL_BYTES = 256e6, 65536


def nccl_report(a):
    """One row per published nccl-tests figure; exit 1 when a large or small row is out of bounds."""
    folder = a.dir if a.dir else os.path.join(HERE, "..", "scenarios", "validation-nccl")
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.endswith((".yaml", ".yml")) and re.search(a.only, f)) if os.path.isdir(folder) else [folder]
    print("| case | op | GPUs | size (B) | measured | memwall | error | bound |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    checked, failed = 0, []
    for f in files:
        run = subprocess.run([a.memwall, "collbench", f, "--json"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stderr)
            return run.returncode
        r = json.loads(run.stdout)
        for m in r.get("measured", []):
            size = m["size_bytes"]
            if "busbw_gb_per_s" in m:
                shown = f"{m['busbw_gb_per_s']:.2f} GB/s", f"{m['simulated_busbw_gb_per_s']:.2f} GB/s"
            else:
                shown = f"{m['time_us']:.2f} us", f"{m['simulated_time_us']:.2f} us"
            bound = a.nccl_large if size >= LARGE_BYTES else a.nccl_small if size <= SMALL_BYTES else None
            ok = bound is None or abs(m["error"]) <= bound
            checked += 1
            if not ok:
                failed.append(f"{r.get('name', f)} {size:.0f} B")
            limit = f"{100 * bound:.0f}%" if bound is not None else "-"
            print(f"| {r.get('name', os.path.basename(f))} | {r['op']} | {r['gpus']} | {size:.0f} | {shown[0]} | "
                  f"{shown[1]} | {100 * m['error']:+.1f}% | {limit}{'' if ok else ' FAIL'} |")
    print(f"\n{checked} published nccl-tests figures, {checked - len(failed)} within their bound"
          + (f"; out of bounds: {', '.join(failed)}" if failed else ""))
    ok = checked > 0 and len(failed) <= a.max_misses
    print(f"{int(ok)} passed, {int(not ok)} failed (rows out of their bound allowed: {a.max_misses})")
    return 0 if ok else 1


def memory_report(a, rows):
    """Published peak memory (scenarios/validation-memory) against the footprint of the stage the source
    logs, less the CUDA context and NCCL's buffers (outside PyTorch's allocator)."""
    print("| run | GPU | measured GB | kind | memwall GB | error |")
    print("| --- | --- | --- | --- | --- | --- |")
    checked, within, misses = 0, 0, []
    for r in rows:
        if "measured_peak_memory_bytes" not in r:
            continue
        measured, predicted = r["measured_peak_memory_bytes"], r["predicted_peak_memory_bytes"]
        error = predicted / measured - 1.0
        checked += 1
        if abs(error) <= a.max_error:
            within += 1
        else:
            misses.append(r["name"])
        print(f"| {r['name']} | {r['gpu']} | {measured / 1e9:.2f} | {r['measured_memory_kind']} | "
              f"{predicted / 1e9:.2f} | {100 * error:+.1f}% |")
    print(f"\n{checked} published peaks, {within} within {100 * a.max_error:.0f}%; outside: {', '.join(misses) or 'none'}")
    ok = checked > 0 and len(misses) <= a.max_misses and all(not re.search(a.must_hold, m) for m in misses)
    print(f"{int(ok)} passed, {int(not ok)} failed")
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", nargs="*", help="scenario folders (or files); several: one table, one figure")
    p.add_argument("--memwall", default=os.path.join(HERE, "..", "build", "memwall"))
    p.add_argument("--max-error", type=float, default=0.10)
    p.add_argument("--min-share", type=float, default=1.0, help="share of runs that must be within --max-error")
    p.add_argument("--worst", type=float, default=float("inf"), help="no run may be off by more than this")
    p.add_argument("--plot", help="also draw predicted vs measured (log-log, one colour per GPU profile)")
    p.add_argument("--only", default="", help="keep the scenario files whose names match this regex")
    p.add_argument("-j", "--jobs", type=int, default=1, help="memwall processes at once")
    p.add_argument("--nccl", action="store_true", help="the nccl-tests validation (memwall collbench)")
    p.add_argument("--nccl-large", type=float, default=0.15, help="busbw bound for sizes >= 256 MB")
    p.add_argument("--nccl-small", type=float, default=0.30, help="time bound for sizes <= 64 KiB")
    p.add_argument("--max-misses", type=int, default=0,
                   help="--nccl, --memory: rows allowed outside their bound (a ratchet: the ctest names today's count)")
    p.add_argument("--memory", action="store_true",
                   help="published peak memory (scenarios/validation-memory) within --max-error")
    p.add_argument("--must-hold", default="^$", help="--memory: runs whose names match may never miss")
    a = p.parse_args()
    if a.nccl:
        a.dir = a.dir[0] if a.dir else None
        return nccl_report(a)
    dirs = a.dir or [os.path.join(HERE, "..", "scenarios", "validation")]
    files = []
    for d in dirs:
        files += sorted(os.path.join(d, f) for f in os.listdir(d)
                        if f.endswith((".yaml", ".yml")) and re.search(a.only, f)) if os.path.isdir(d) else [d]
    jobs = max(1, a.jobs)
    slices = [files[i::jobs] for i in range(jobs) if files[i::jobs]]
    procs = [subprocess.Popen([a.memwall, "run", "--json", *part], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for part in slices]
    by_file = {}
    for part, proc in zip(slices, procs):
        out, err = proc.communicate()
        if proc.returncode != 0:
            sys.stderr.write(err)
            return proc.returncode
        for f, line in zip(part, out.splitlines()):
            by_file[f] = json.loads(line)
    rows = [by_file[f] for f in files]
    for f, r in zip(files, rows):
        r["source_dir"] = os.path.basename(os.path.dirname(os.path.abspath(f)))
    if a.memory:
        return memory_report(a, rows)
    # MFU both ways by memwall's FLOP count (causal attention as executed): measured = memwall's
    # MFU x measured / predicted throughput.
    print("| run | GPU profile | measured tokens/s/GPU | predicted | error | MFU measured | MFU predicted |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    worst, checked, within = 0.0, 0, 0
    for r in rows:
        if "measured_tokens_per_s_per_gpu" not in r:
            continue
        measured, predicted = r["measured_tokens_per_s_per_gpu"], r["tokens_per_s_per_gpu"]
        error = predicted / measured - 1.0
        worst = max(worst, abs(error))
        checked += 1
        within += abs(error) <= a.max_error
        digits = 1 if measured < 100 else 0
        mfu = r.get("mfu", 0.0)
        print(f"| {r['name']} | {r['gpu']} | {measured:.{digits}f} | {predicted:.{digits}f} | {100 * error:+.1f}% "
              f"| {100 * mfu * measured / predicted:.1f}% | {100 * mfu:.1f}% |")
    print(f"\n{checked} published runs, {within} within {100 * a.max_error:.0f}%, largest |error| {100 * worst:.1f}%")
    ok = checked > 0 and within >= a.min_share * checked and worst <= a.worst
    if a.plot:
        plot([r for r in rows if "measured_tokens_per_s_per_gpu" in r], a.max_error, a.plot)
    print(f"{int(ok)} passed, {int(not ok)} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
