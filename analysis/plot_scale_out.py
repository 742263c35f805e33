#!/usr/bin/env python3
"""Gradient-accumulation / DP scale-out study: ms/token, mJ/token and slowdown against tokens per
GPU per step, one line per (fabric, N). Usage: plot_scale_out.py RESULTS.csv|RESULTS.h5 OUT.png"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from sweep_csv import fabric_label, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="memwall sweep results (.csv, .h5 or .hdf5)")
    parser.add_argument("out", help="figure to write (.png, .pdf, .svg)")
    args = parser.parse_args()
    rows = load(args.results)
    series = {}
    for r in rows:
        series.setdefault((fabric_label(r), int(r["gpus"])), []).append(r)
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.8))
    panels = [("ms_per_token", "time per token [ms]"), ("mj_per_token", "energy per token [mJ]"),
              ("slowdown", "slowdown vs. peak FLOP/s [x]")]
    for ax, (key, label) in zip(axes, panels):
        for (fabric, n), pts in sorted(series.items()):
            pts.sort(key=lambda r: r["tokens_per_gpu"])
            ax.plot([p["tokens_per_gpu"] for p in pts], [p[key] for p in pts], marker="o", ms=3,
                    ls="-" if "NVLink" in fabric else "--", label=f"{fabric}, N={n}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tokens per GPU per optimizer step")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=8)
    fig.suptitle("Gradient accumulation vs. data-parallel scale-out (simulated, memwall)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    print(f"wrote {args.out} ({len(rows)} points)")


if __name__ == "__main__":
    main()
