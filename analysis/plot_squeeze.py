#!/usr/bin/env python3
"""The batch squeeze (seed Table 6) from simulated sweep results: fixed per-step cost in
token-equivalents and the time-optimal batch per GPU against N, per fabric.
Usage: plot_squeeze.py RESULTS.csv|RESULTS.h5 OUT.png [B_CRIT_TOKENS]"""
import argparse
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from sweep_csv import fabric_label, load


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="memwall sweep results (.csv, .h5 or .hdf5)")
    parser.add_argument("out", help="figure to write (.png, .pdf, .svg)")
    parser.add_argument("b_crit_tokens", nargs="?", type=float, default=1e6,
                        help="critical batch size in tokens (default 1e6)")
    args = parser.parse_args()
    rows = load(args.results)
    b_crit = args.b_crit_tokens
    series = {}
    for r in rows:
        t_fixed = (r["t_allreduce_s"] + r["t_optimizer_s"]) * r["gpu_peak_flops_per_s"] / (6 * r["params"])
        b_opt = math.sqrt(b_crit * r["gpus"] * t_fixed)
        series.setdefault(fabric_label(r), []).append((r["gpus"], t_fixed, b_opt / r["gpus"]))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for fabric, pts in series.items():
        pts.sort()
        axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=fabric)
        axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=fabric)
    axes[0].set_ylabel("T_fixed [token-equivalents per GPU]")
    axes[1].set_ylabel("T_dev,opt = B_opt / N [tokens per GPU]")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("data-parallel GPUs N")
        ax.grid(alpha=0.3, which="both")
        ax.legend()
    fig.suptitle(f"Batch squeeze, simulated (B_crit = {b_crit:.0e} tokens)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    print(f"wrote {args.out} ({len(rows)} points)")


if __name__ == "__main__":
    main()
