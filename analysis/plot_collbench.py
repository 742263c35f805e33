#!/usr/bin/env python3
"""Bus bandwidth against message size from `memwall collbench --out R.csv` results, as nccl-tests
users draw theirs: log-x size, busbw in GB/s, one line per algorithm (and protocol) that ran, one
line per CSV given (e.g. --algo ring, --algo tree and the tuner's `auto` run over the same sizes).
With --measured FILE (a scenarios/validation-nccl file), its published rows as points.

Usage: plot_collbench.py R.csv [R2.csv ...] [--out collbench.png] [--measured CASE.yaml]
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_style  # noqa: E402

UNITS = {"B": 1, "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "KB": 1e3, "MB": 1e6, "GB": 1e9}


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "busbw_gb_per_s" not in rows[0]:
        raise SystemExit(f"{path}: not a `memwall collbench --out` CSV (no busbw_gb_per_s column)")
    return rows


def measured_points(path):
    """(size bytes, busbw GB/s) of a validation-nccl file's busbw rows (no YAML parser needed: its
    `measured:` items are one-line mappings)."""
    points = []
    for line in open(path):
        size = re.search(r"size:\s*([0-9.]+)\s*([KMG]i?B|B)\b", line)
        bw = re.search(r"busbw:\s*([0-9.]+)\s*GB/s", line)
        if size and bw:
            points.append((float(size.group(1)) * UNITS[size.group(2).upper()], float(bw.group(1))))
    return points


def main():
    p = figure_style.parser(__doc__)
    p.add_argument("results", nargs="+", help="CSV files from memwall collbench --out")
    figure_style.add_out(p, "collbench.png")
    p.add_argument("--measured", help="a scenarios/validation-nccl file: its published busbw rows as points")
    a = p.parse_args()
    plt = figure_style.plt
    fig, ax = plt.subplots(figsize=(8, 5))
    titles = set()
    for path in a.results:
        rows = read(path)
        first = rows[0]
        titles.add(f"{first['op']} on {first['gpus']} GPUs of {first['fabric']}")
        # One line per file: named by its algorithm, or the tuner's when it picked several.
        rows.sort(key=lambda r: float(r["size_bytes"]))
        algorithms = sorted({r["algorithm"] for r in rows})
        protocols = sorted({r["protocol"] for r in rows})
        tuner = len(algorithms) > 1
        label = (f"tuner's pick ({', '.join(algorithms)})" if tuner else algorithms[0]) + f"; {', '.join(protocols)}"
        ax.plot([float(r["size_bytes"]) for r in rows], [float(r["busbw_gb_per_s"]) for r in rows],
                marker="o" if not tuner else None, markersize=3, linestyle="--" if tuner else "-",
                linewidth=2.2 if tuner else 1.5, label=label, zorder=3 if tuner else 2)
    if a.measured:
        points = measured_points(a.measured)
        if points:
            ax.scatter([s for s, _ in points], [b for _, b in points], color="black", marker="x", zorder=3,
                       label="published nccl-tests")
    ax.set_xscale("log")
    ax.set(xlabel="message size (bytes)", ylabel="bus bandwidth (GB/s)", title="; ".join(sorted(titles)))
    ax.set_ylim(bottom=0)
    figure_style.plain_ticks(ax)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    figure_style.save(fig, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
